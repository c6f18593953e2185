package admin

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consoleOverride reads a partition's override and version.
func consoleOverride(t testing.TB, d consoleDomain, scope string) string {
	t.Helper()
	var capValue *int32
	var version int64
	if err := d.pool.QueryRow(testkit.Context(t), `select max_active, partition_version from docket_claim_partitions where scope_key = $1`, scope).
		Scan(&capValue, &version); err != nil {
		t.Fatal(err)
	}
	if capValue == nil {
		return fmt.Sprintf("none@%d", version)
	}
	return fmt.Sprintf("%d@%d", *capValue, version)
}

// consoleStatus reads a run's status and whether it is poisoned.
func consoleStatus(t testing.TB, d consoleDomain, runID string) string {
	t.Helper()
	var status string
	var poisoned bool
	if err := d.pool.QueryRow(testkit.Context(t), `select status, poisoned_at is not null from docket_runs where run_id = $1`, runID).
		Scan(&status, &poisoned); err != nil {
		t.Fatal(err)
	}
	if poisoned {
		return status + " (poisoned)"
	}
	return status
}

// A cap edit is a compare-and-set on the partition version the form holds:
// it redirects with a notice, and a second tab's stale form is refused with
// 409, both versions named and nothing changed: the page shows the typed and
// the stored cap with their versions, keeps the typed cap in the form and
// applies it on the new version with one button; reset returns to the
// default.
func TestConsoleCapEdit(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, true, nil)
	first, second := newConsoleClient(t, srv), newConsoleClient(t, srv)
	page := first.get("/tenants/acme").expect(t, "acme", http.StatusOK)
	stalePage := second.get("/tenants/acme").expect(t, "acme, second tab", http.StatusOK)
	if !strings.Contains(page.body, `name="expected_version" value="0"`) {
		t.Fatalf("the form does not hold version 0:\n%s", page.body)
	}
	r := first.post("/tenants/acme/cap", url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "expected_version": {"0"}, "op": {"set"}, "cap": {"3"}}).
		expect(t, "set", http.StatusSeeOther)
	if r.location != consolePrefix+"/tenants/acme?done=cap&version=1" {
		t.Fatalf("set redirects to %q", r.location)
	}
	if got := consoleOverride(t, d, "acme"); got != "3@1" {
		t.Fatalf("after set: %s, want 3@1", got)
	}
	r = first.getURL(r.location).expect(t, "after set", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Cap override saved (partition version 1)." {
		t.Errorf("notice %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "cap") + " " + testkit.ConsoleFacts(t, r.body, "source"); got != "3 override" {
		t.Errorf("after set the page shows %q", got)
	}

	r = second.post("/tenants/acme/cap", url.Values{"csrf_token": {consoleCSRF(t, stalePage.body)}, "expected_version": {"0"}, "op": {"set"}, "cap": {"7"}}).
		expect(t, "stale set", http.StatusConflict)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != "Stale edit: the form was for version 0, but the override is now at version 1. Nothing was changed; compare the two below and apply yours on the new version, or edit it." {
		t.Errorf("stale message %q", got)
	}
	// Both edits side by side, the typed cap kept in the form, and a button
	// that applies it on the new version.
	testkit.ExpectRows(t, "stale comparison", testkit.ConsoleTable(t, r.body, "stale"),
		"Yours (refused) | 0 | cap 7", "Stored now | 1 | cap 3 (override)")
	if got := testkit.ConsoleFacts(t, r.body, "cap-apply"); got != "Apply cap 7 on version 1" {
		t.Errorf("apply button %q", got)
	}
	applyForm := consoleForm(t, r.body, "cap-apply-form")
	if want := (url.Values{"csrf_token": {consoleCSRF(t, stalePage.body)}, "expected_version": {"1"}, "op": {"set"}, "cap": {"7"}}); applyForm.Encode() != want.Encode() {
		t.Errorf("apply form %v, want %v", applyForm, want)
	}
	if !strings.Contains(consoleFormHTML(t, r.body, "cap-form"), `name="cap" min="1" max="2147483647" required value="7"`) {
		t.Errorf("the cap form does not keep the typed 7:\n%s", consoleFormHTML(t, r.body, "cap-form"))
	}
	if got := consoleOverride(t, d, "acme"); got != "3@1" {
		t.Fatalf("after the stale set: %s, want 3@1 unchanged", got)
	}
	r = second.post("/tenants/acme/cap", url.Values{"csrf_token": {consoleCSRF(t, stalePage.body)}, "expected_version": {"0"}, "op": {"reset"}}).
		expect(t, "stale reset", http.StatusConflict)
	testkit.ExpectRows(t, "stale reset comparison", testkit.ConsoleTable(t, r.body, "stale"),
		"Yours (refused) | 0 | reset to the default", "Stored now | 1 | cap 3 (override)")
	if want := (url.Values{"csrf_token": {consoleCSRF(t, stalePage.body)}, "expected_version": {"1"}, "op": {"reset"}}); consoleForm(t, r.body, "cap-apply-form").Encode() != want.Encode() {
		t.Errorf("apply reset form %v", consoleForm(t, r.body, "cap-apply-form"))
	}
	if got := consoleOverride(t, d, "acme"); got != "3@1" {
		t.Fatalf("after the stale reset: %s, want 3@1 unchanged", got)
	}
	// Applying on the new version writes the typed cap.
	r = second.post("/tenants/acme/cap", applyForm).expect(t, "apply on version 1", http.StatusSeeOther)
	if r.location != consolePrefix+"/tenants/acme?done=cap&version=2" {
		t.Fatalf("apply redirects to %q", r.location)
	}
	if got := consoleOverride(t, d, "acme"); got != "7@2" {
		t.Fatalf("after applying: %s, want 7@2", got)
	}

	r = first.post("/tenants/acme/cap", url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "expected_version": {"2"}, "op": {"reset"}}).
		expect(t, "reset", http.StatusSeeOther)
	if got := consoleOverride(t, d, "acme"); got != "none@3" {
		t.Fatalf("after reset: %s, want none@3", got)
	}

	// Invalid input is refused with 400 by the facade's own validation.
	token := consoleCSRF(t, page.body)
	for name, form := range map[string]url.Values{
		"cap 0":           {"expected_version": {"3"}, "op": {"set"}, "cap": {"0"}},
		"cap not numeric": {"expected_version": {"3"}, "op": {"set"}, "cap": {"many"}},
		"cap too large":   {"expected_version": {"3"}, "op": {"set"}, "cap": {"2147483648"}},
		"no version":      {"op": {"set"}, "cap": {"3"}},
		"negative":        {"expected_version": {"-1"}, "op": {"set"}, "cap": {"3"}},
		"unknown op":      {"expected_version": {"3"}, "op": {"double"}},
	} {
		form.Set("csrf_token", token)
		r := first.post("/tenants/acme/cap", form).expect(t, name, http.StatusBadRequest)
		if !strings.Contains(r.body, `class="message error"`) {
			t.Errorf("%s: no message on the page", name)
		}
	}
	if got := consoleOverride(t, d, "acme"); got != "none@3" {
		t.Fatalf("after refused edits: %s, want none@3", got)
	}

	// The tenantless scope has its own form path; a new scope gets its
	// partition at version 0.
	r = first.get("/tenantless").expect(t, "tenantless", http.StatusOK)
	first.post("/tenantless/cap", url.Values{"csrf_token": {consoleCSRF(t, r.body)}, "expected_version": {"0"}, "op": {"set"}, "cap": {"5"}}).
		expect(t, "tenantless set", http.StatusSeeOther)
	if got := consoleOverride(t, d, ""); got != "5@1" {
		t.Fatalf("tenantless after set: %s", got)
	}
}

// Run actions apply the facade's transitions and redirect with a notice;
// a transition the run's status refuses is 422 with nothing changed.
func TestConsoleRunActions(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	token := consoleCSRF(t, c.get("/runs/acme/a3").expect(t, "a3", http.StatusOK).body)
	act := func(path string, status int) consoleResponse {
		t.Helper()
		return c.post(path, url.Values{"csrf_token": {token}}).expect(t, path, status)
	}
	// The buttons follow the status.
	for path, want := range map[string]string{
		"/runs/acme/a3": "cancel resume", "/runs/acme/ap": "cancel retry-poisoned", "/tenantless/runs/n1": "retry",
		"/runs/beta/b3": "", "/runs/beta/b1": "cancel",
	} {
		body := c.get(path).expect(t, path, http.StatusOK).body
		var got []string
		for _, name := range []string{"cancel", "resume", "retry-poisoned", "retry"} {
			if strings.Contains(body, `id="action-`+name+`"`) {
				got = append(got, name)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s offers %v, want %q", path, got, want)
		}
	}

	r := act("/runs/acme/a3/resume", http.StatusSeeOther)
	if r.location != consolePrefix+"/runs/acme/a3?done=resume" {
		t.Errorf("resume redirects to %q", r.location)
	}
	if got := consoleStatus(t, d, "a3"); got != "running" {
		t.Errorf("a3 after resume: %s", got)
	}
	if got := testkit.ConsoleFacts(t, c.getURL(r.location).body, "notice"); got != "Run resumed." {
		t.Errorf("resume notice %q", got)
	}
	act("/runs/acme/ap/retry-poisoned", http.StatusSeeOther)
	if got := consoleStatus(t, d, "ap"); got != "running" {
		t.Errorf("ap after retry-poisoned: %s", got)
	}
	// A cancel without the confirmation's field is sent to the confirmation
	// page and changes nothing.
	r = act("/runs/beta/b1/cancel", http.StatusSeeOther)
	if r.location != consolePrefix+"/runs/beta/b1/cancel" {
		t.Errorf("an unconfirmed cancel redirects to %q", r.location)
	}
	if got := consoleStatus(t, d, "b1"); got != "running" {
		t.Errorf("b1 after an unconfirmed cancel: %s", got)
	}
	r = c.post("/runs/beta/b1/cancel", url.Values{"csrf_token": {token}, "confirm": {"yes"}}).expect(t, "confirmed cancel", http.StatusSeeOther)
	if r.location != consolePrefix+"/runs/beta/b1?done=cancel" {
		t.Errorf("cancel redirects to %q", r.location)
	}
	if got := consoleStatus(t, d, "b1"); got != "cancelled" {
		t.Errorf("b1 after cancel: %s", got)
	}
	act("/runs/beta/b1/retry", http.StatusSeeOther)
	if got := consoleStatus(t, d, "b1"); got != "running" {
		t.Errorf("b1 after retry: %s", got)
	}
	act("/tenantless/runs/n1/retry", http.StatusSeeOther)
	if got := consoleStatus(t, d, "n1"); got != "running" {
		t.Errorf("n1 after retry: %s", got)
	}

	// Refused transitions change nothing.
	r = c.post("/runs/beta/b3/cancel", url.Values{"csrf_token": {token}, "confirm": {"yes"}}).expect(t, "cancel b3", http.StatusUnprocessableEntity)
	if testkit.ConsoleFacts(t, r.body, "error") != `run "b3" is done; cancel applies only to a run that is running, waiting or poisoned` {
		t.Errorf("cancel of a done run: %q", testkit.ConsoleFacts(t, r.body, "error"))
	}
	act("/runs/beta/b3/retry", http.StatusUnprocessableEntity)
	act("/runs/acme/a1/resume", http.StatusUnprocessableEntity)
	act("/runs/acme/a1/retry-poisoned", http.StatusUnprocessableEntity)
	for run, want := range map[string]string{"b3": "done", "a1": "running"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Errorf("%s after refused actions: %s, want %s", run, got, want)
		}
	}
	c.post("/runs/acme/missing/cancel", url.Values{"csrf_token": {token}, "confirm": {"yes"}}).expect(t, "cancel missing", http.StatusNotFound)
	act("/runs/acme/a1/explode", http.StatusNotFound)
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Errorf("a1 after unknown actions: %s", got)
	}
}

// Every write needs the CSRF token that fits the browser's nonce cookie: a
// missing, wrong or foreign token, or a missing cookie, is 403 and changes
// nothing.
func TestConsoleCSRF(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, true, nil)
	c := newConsoleClient(t, srv)
	token := consoleCSRF(t, c.get("/tenants/acme").body)
	other := newConsoleClient(t, srv)
	otherToken := consoleCSRF(t, other.get("/tenants/acme").body)
	foreign := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	foreignToken := consoleCSRF(t, foreign.get("/tenants/acme").body)
	cookieless := newConsoleClient(t, srv)
	capForm := func(tok string) url.Values {
		return url.Values{"csrf_token": {tok}, "expected_version": {"0"}, "op": {"set"}, "cap": {"9"}}
	}
	for name, r := range map[string]consoleResponse{
		"no token":             c.post("/tenants/acme/cap", url.Values{"expected_version": {"0"}, "op": {"set"}, "cap": {"9"}}),
		"wrong token":          c.post("/tenants/acme/cap", capForm(strings.Repeat("0", 64))),
		"another browser's":    c.post("/tenants/acme/cap", capForm(otherToken)),
		"another handler's":    c.post("/tenants/acme/cap", capForm(foreignToken)),
		"no cookie":            cookieless.post("/tenants/acme/cap", capForm(token)),
		"cancel without token": c.post("/runs/acme/a1/cancel", url.Values{"confirm": {"yes"}}),
		"token in the query":   c.post("/runs/acme/a1/cancel?csrf_token="+token, url.Values{"confirm": {"yes"}}),
	} {
		r.expect(t, name, http.StatusForbidden)
		if !strings.Contains(r.body, "CSRF token is missing or wrong") {
			t.Errorf("%s: message:\n%s", name, r.body)
		}
	}
	if got := consoleOverride(t, d, "acme"); got != "none@0" {
		t.Fatalf("acme after refused writes: %s", got)
	}
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Fatalf("a1 after refused writes: %s", got)
	}
	// The same browser with its own token succeeds.
	c.post("/tenants/acme/cap", capForm(token)).expect(t, "own token", http.StatusSeeOther)
	if got := consoleOverride(t, d, "acme"); got != "9@1" {
		t.Fatalf("acme after the write: %s", got)
	}
}

// A read-only console (the default) renders no form and refuses every POST
// with 403, even one with a valid-looking token; nothing changes.
func TestConsoleReadOnly(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	for _, path := range []string{"/tenants/acme", "/runs/acme/a3", "/runs/acme/ap"} {
		body := c.get(path).expect(t, path, http.StatusOK).body
		if strings.Contains(body, "<form method=\"post\"") {
			t.Errorf("%s renders a write form", path)
		}
	}
	for _, path := range []string{"/tenants/acme/cap", "/tenantless/cap", "/runs/acme/a3/resume", "/runs/acme/a1/cancel", "/runs/acme/ap/retry-poisoned", "/tenantless/runs/n1/retry"} {
		r := c.post(path, url.Values{"csrf_token": {strings.Repeat("a", 64)}, "expected_version": {"0"}, "op": {"set"}, "cap": {"9"}}).
			expect(t, path, http.StatusForbidden)
		if !strings.Contains(r.body, "This console is read-only") {
			t.Errorf("%s: message:\n%s", path, r.body)
		}
	}
	if got := consoleOverride(t, d, "acme"); got != "none@0" {
		t.Fatalf("acme: %s", got)
	}
	for run, want := range map[string]string{"a3": "waiting", "a1": "running", "ap": "running (poisoned)", "n1": "failed"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Errorf("%s: %s, want %s", run, got, want)
		}
	}
}

// The auth hook: an application middleware wrapped around the handler
// guards every page and every action; a rejecting one lets nothing through.
func TestConsoleAuthHook(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	// The handler runs on the server's goroutines.
	var reached atomic.Int64
	reject := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Operator") != "yes" {
				http.Error(w, "operators only", http.StatusUnauthorized)
				return
			}
			reached.Add(1)
			next.ServeHTTP(w, r)
		})
	}
	srv := consoleServer(t, d.pool, true, reject)
	c := newConsoleClient(t, srv)
	for _, path := range []string{"/", "/fragment/domain", "/tenants", "/tenants/acme", "/tenantless", "/ring", "/runs", "/runs/acme/a1", "/tenantless/runs/n1", "/runs/acme/a1/cancel", "/tenantless/runs/n1/cancel", "/schedules", "/static/style.css"} {
		r := c.get(path).expect(t, path, http.StatusUnauthorized)
		if r.body != "operators only\n" {
			t.Errorf("%s: body %q", path, r.body)
		}
	}
	for _, path := range []string{"/tenants/acme/cap", "/tenantless/cap", "/runs/acme/a1/cancel", "/runs/acme/a3/resume", "/runs/acme/ap/retry-poisoned", "/tenantless/runs/n1/retry",
		"/schedules/acme/nightly/pause", "/tenantless/schedules/hourly/resume"} {
		c.post(path, url.Values{"expected_version": {"0"}, "op": {"set"}, "cap": {"9"}}).expect(t, path, http.StatusUnauthorized)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the console was reached %d times", n)
	}
	if got := consoleOverride(t, d, "acme"); got != "none@0" {
		t.Fatalf("acme: %s", got)
	}
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Fatalf("a1: %s", got)
	}
	// With the app's credential the same pages are served.
	req, err := http.NewRequest(http.MethodGet, srv.URL+consolePrefix+"/tenants", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Operator", "yes")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := reached.Load(); resp.StatusCode != http.StatusOK || n != 1 {
		t.Fatalf("an operator gets %d (reached %d)", resp.StatusCode, n)
	}
}

// consoleFormHTML returns the markup of the form with id.
func consoleFormHTML(t testing.TB, body, id string) string {
	t.Helper()
	start := strings.Index(body, `id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no form %q in:\n%s", id, body)
	}
	start = strings.LastIndex(body[:start], "<form")
	end := strings.Index(body[start:], "</form>")
	return body[start : start+end]
}

// consoleForm returns the hidden fields of the form with id, as it would
// submit them.
func consoleForm(t testing.TB, body, id string) url.Values {
	t.Helper()
	form := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(consoleFormHTML(t, body, id), -1) {
		form.Add(m[1], html.UnescapeString(m[2]))
	}
	return form
}

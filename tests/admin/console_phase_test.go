package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The phase tabs count the filtered runs of each phase in one read and
// link the filtered list; a retrying run shows its next wake and the first
// line of its last failed attempt's error, not the operator's retry entry.
func TestConsoleRunsPhaseTabs(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	// a2 failed an attempt and waits out its backoff: retrying.
	testkit.ExecSQL(t, d.pool, `update docket_runs set attempt = 2, wake_at = '2031-01-01T00:00:00Z', updated_at = $1,
		errors = jsonb_build_array(
			jsonb_build_object('attempt', 1, 'at', '2026-01-01T00:00:30Z', 'kind', 'error', 'error', 'old'),
			jsonb_build_object('attempt', 2, 'at', $1::timestamptz, 'kind', 'panic', 'error', 'nil map'||chr(10)||'goroutine 7'))
		where run_id = 'a2'`, d.at)
	// n1 was failed, then an operator's retry entry came last: its last error is the failure.
	testkit.ExecSQL(t, d.pool, `update docket_runs set errors = jsonb_build_array(
			jsonb_build_object('attempt', 3, 'at', '2026-01-01T00:00:40Z', 'kind', 'error', 'error', 'smtp 451'),
			jsonb_build_object('attempt', 3, 'at', '2026-01-01T00:00:50Z', 'kind', 'retry', 'error', 'failed'))
		where run_id = 'n1'`)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/runs").expect(t, "runs", http.StatusOK)
	want := "all 10, queued 2, ready 1, executing 1, retrying 1, scheduled 1, paused 0, waiting 1, poisoned 1, done 1, failed 1, cancelled 0"
	if got := consoleTabTexts(t, r.body); got != want {
		t.Errorf("tabs %q, want %q", got, want)
	}
	if !strings.Contains(r.body, `id="tab-all" aria-current="page"`) {
		t.Errorf("the all tab is not current")
	}
	at := consoleTime(d.at)
	rows := testkit.ConsoleTable(t, r.body, "runs")
	for _, want := range []string{
		"a2 | acme | send | running | retrying | 2 | 2031-01-01 00:00:00Z | nil map | — | 0 | 2026-01-01 00:02:00Z | " + at,
		"n1 | (tenantless) | send | failed | failed | 0 | — | smtp 451 | — | 0 | 2026-01-01 00:07:00Z | " + at,
	} {
		found := false
		for _, row := range rows {
			found = found || row == want
		}
		if !found {
			t.Errorf("no row %q in:\n%s", want, strings.Join(rows, "\n"))
		}
	}

	// A tab links the filtered list of its phase, keeping the other filters.
	r = c.get("/runs?tenant=acme&graph=send").expect(t, "acme send", http.StatusOK)
	if got, want := consoleTabTexts(t, r.body), "all 3, queued 1, ready 0, executing 0, retrying 1, scheduled 0, paused 0, waiting 0, poisoned 1, done 0, failed 0, cancelled 0"; got != want {
		t.Errorf("acme send tabs %q, want %q", got, want)
	}
	link := consoleLink(r.body, "tab-queued")
	if link != consolePrefix+"/runs?graph=send&phase=queued&tenant=acme" {
		t.Fatalf("queued tab links %q", link)
	}
	r = c.getURL(link).expect(t, link, http.StatusOK)
	testkit.ExpectRows(t, "acme send queued", testkit.ConsoleTable(t, r.body, "runs"),
		"a1 | acme | send | running | queued | 0 | — | — | — | 0 | 2026-01-01 00:01:00Z | "+at)
	if !strings.Contains(r.body, `id="tab-queued" aria-current="page"`) || consoleLink(r.body, "tab-all") != consolePrefix+"/runs?graph=send&tenant=acme" {
		t.Errorf("the queued tab is not current, or all does not drop the phase: %q", consoleLink(r.body, "tab-all"))
	}
	// Every scope, one phase: the queued tab in admission order (due time,
	// then insertion: a1 was inserted first), newest first on request; an
	// unknown phase is refused.
	for path, want := range map[string]string{"/runs?phase=queued": "a1 x1", "/runs?phase=queued&order=newest": "x1 a1"} {
		r = c.get(path).expect(t, path, http.StatusOK)
		var ids []string
		for _, row := range testkit.ConsoleTable(t, r.body, "runs") {
			ids = append(ids, strings.SplitN(row, " | ", 2)[0])
		}
		if strings.Join(ids, " ") != want {
			t.Errorf("%s lists %v, want %s", path, ids, want)
		}
	}
	c.get("/runs?phase=running").expect(t, "unknown phase", http.StatusBadRequest)

	// The domain page counts every phase, next to the statuses.
	r = c.get("/").expect(t, "domain", http.StatusOK)
	testkit.ExpectRows(t, "phases", testkit.ConsoleTable(t, r.body, "phases"),
		"queued | 2", "ready | 1", "executing | 1", "retrying | 1", "scheduled | 1", "paused | 0", "waiting | 1", "poisoned | 1", "done | 1", "failed | 1", "cancelled | 0")
	testkit.ExpectRows(t, "statuses", testkit.ConsoleTable(t, r.body, "statuses"),
		"running | 7", "waiting | 1", "done | 1", "failed | 1", "cancelled | 0")
	if !strings.Contains(r.body, `href="`+consolePrefix+`/runs?phase=retrying"`) {
		t.Errorf("the retrying count does not link its runs")
	}
}

// consoleTabTexts is the text of every phase tab, "all" first.
func consoleTabTexts(t *testing.T, body string) string {
	t.Helper()
	var out []string
	ids := []string{"all"}
	for _, p := range docket.RunPhases() {
		ids = append(ids, string(p))
	}
	for _, id := range ids {
		start := strings.Index(body, `id="tab-`+id+`"`)
		if start < 0 {
			t.Fatalf("no tab %s", id)
		}
		end := strings.Index(body[start:], "</a>")
		out = append(out, testkit.ConsoleText(`<a `+body[start:start+end]))
	}
	return strings.Join(out, ", ")
}

// Bulk cancel: the confirmation lists the selected runs and changes
// nothing; applying it cancels each run it may and reports the refusal of
// the done one in the run page's terms.
func TestConsoleBulkCancel(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	page := c.get("/runs").expect(t, "runs", http.StatusOK)
	token := consoleCSRF(t, page.body)
	for _, key := range []string{"acme/a1", "beta/b1", "beta/b3", "/n1"} {
		if !strings.Contains(page.body, `name="run" value="`+key+`"`) {
			t.Fatalf("no checkbox for %s", key)
		}
	}
	form := url.Values{"csrf_token": {token}, "action": {"cancel"}, "run": {"acme/a1", "beta/b1", "beta/b3"}}
	r := c.post("/runs/bulk", form).expect(t, "confirm", http.StatusOK)
	if got := consoleList(t, r.body, "bulk-runs"); got != "a1 (acme) b1 (beta) b3 (beta)" {
		t.Errorf("confirmation lists %q", got)
	}
	if !strings.Contains(r.body, "<h1>Cancel 3 runs?</h1>") || testkit.ConsoleFacts(t, r.body, "bulk-apply") != "Cancel 3 runs" {
		t.Errorf("confirmation title or button:\n%s", r.body)
	}
	for run, want := range map[string]string{"a1": "running", "b1": "running", "b3": "done"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Fatalf("%s after the confirmation: %s, want %s unchanged", run, got, want)
		}
	}
	apply := url.Values{"csrf_token": {consoleCSRF(t, r.body)}, "action": {"cancel"}, "run": {"acme/a1", "beta/b1", "beta/b3"}}
	r = c.post("/runs/bulk/apply", apply).expect(t, "apply", http.StatusOK)
	testkit.ExpectRows(t, "results", testkit.ConsoleTable(t, r.body, "bulk-results"),
		"a1 | acme | done",
		"b1 | beta | done",
		`b3 | beta | refused: run "b3" is done; cancel applies only to a run that is running, waiting or poisoned`)
	if got := testkit.ConsoleFacts(t, r.body, "bulk-summary"); !strings.HasPrefix(got, "2 done, 1 refused.") {
		t.Errorf("summary %q", got)
	}
	for run, want := range map[string]string{"a1": "cancelled", "b1": "cancelled", "b3": "done", "a2": "running"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Errorf("%s after the bulk cancel: %s, want %s", run, got, want)
		}
	}
}

// Bulk retry of "all runs matching this filter": the filter is resolved
// at confirmation (bounded at 1000), the confirmation carries exactly those
// runs, and the refusal of a run that is not finished names the remedy.
func TestConsoleBulkRetryAllMatching(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	// 60 failed runs of one tenant, so the list truncates past 50.
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, finished_at, started_at)
		select 'f' || lpad(i::text, 2, '0'), 'fail', 'send', 'h1', '{}', 'failed', now(), '2026-01-02T00:00:00Z'::timestamptz + i * interval '1 second'
		  from generate_series(1, 60) i`)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	page := c.get("/runs?tenant=fail&phase=failed").expect(t, "runs", http.StatusOK)
	r := c.post("/runs/bulk", url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "action": {"retry"}, "all": {"1"},
		"tenant": {"fail"}, "phase": {"failed"}}).expect(t, "confirm all", http.StatusOK)
	if !strings.Contains(r.body, "<h1>Retry 60 runs?</h1>") || testkit.ConsoleFacts(t, r.body, "bulk-more") != "and 10 more" {
		t.Fatalf("confirmation of 60:\n%s", r.body)
	}
	listed := consoleList(t, r.body, "bulk-runs")
	if !strings.HasPrefix(listed, "f60 (fail) f59 (fail)") || !strings.HasSuffix(listed, "f11 (fail) and 10 more") {
		t.Errorf("listed %q", listed)
	}
	if got := strings.Count(r.body, `<input type="hidden" name="run"`); got != 60 {
		t.Errorf("the confirmation carries %d runs, want 60", got)
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_runs where tenant_id = 'fail' and status = 'failed'`); n != 60 {
		t.Fatalf("the confirmation changed runs: %d failed", n)
	}
	form := url.Values{"csrf_token": {consoleCSRF(t, r.body)}, "action": {"retry"}}
	for i := 60; i >= 1; i-- {
		form.Add("run", fmt.Sprintf("fail/f%02d", i))
	}
	form.Add("run", "acme/a1")
	r = c.post("/runs/bulk/apply", form).expect(t, "apply", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "bulk-summary"); !strings.HasPrefix(got, "60 done, 1 refused.") {
		t.Errorf("summary %q", got)
	}
	rows := testkit.ConsoleTable(t, r.body, "bulk-results")
	if rows[len(rows)-1] != `a1 | acme | refused: run "a1" is running; retry applies only to a run that is failed or cancelled` {
		t.Errorf("a1's result %q", rows[len(rows)-1])
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_runs where tenant_id = 'fail' and status = 'running'`); n != 60 {
		t.Errorf("after the bulk retry %d of 60 are running", n)
	}
	// Nothing selected is refused, as is an unknown action.
	token := consoleCSRF(t, page.body)
	c.post("/runs/bulk", url.Values{"csrf_token": {token}, "action": {"cancel"}}).expect(t, "nothing selected", http.StatusBadRequest)
	c.post("/runs/bulk", url.Values{"csrf_token": {token}, "action": {"resume"}, "run": {"acme/a3"}}).expect(t, "resume in bulk", http.StatusBadRequest)
	if got := consoleStatus(t, d, "a3"); got != "waiting" {
		t.Errorf("a3 after refused bulk posts: %s", got)
	}
}

// A bulk post without the CSRF token, or on a read-only console, is 403
// and changes nothing; a read-only runs page renders no bulk form.
func TestConsoleBulkRefusals(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	c.get("/runs").expect(t, "runs", http.StatusOK)
	for _, path := range []string{"/runs/bulk", "/runs/bulk/apply"} {
		r := c.post(path, url.Values{"action": {"cancel"}, "run": {"acme/a1"}}).expect(t, path+" without a token", http.StatusForbidden)
		if !strings.Contains(testkit.ConsoleFacts(t, r.body, "error"), "CSRF token is missing or wrong") {
			t.Errorf("%s: %q", path, testkit.ConsoleFacts(t, r.body, "error"))
		}
		c.post(path, url.Values{"csrf_token": {strings.Repeat("0", 64)}, "action": {"cancel"}, "run": {"acme/a1"}}).
			expect(t, path+" with a wrong token", http.StatusForbidden)
	}
	ro := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	page := ro.get("/runs").expect(t, "read-only runs", http.StatusOK)
	if strings.Contains(page.body, `id="bulk-form"`) || strings.Contains(page.body, `name="run"`) {
		t.Errorf("a read-only runs page renders the bulk form")
	}
	r := ro.post("/runs/bulk/apply", url.Values{"action": {"cancel"}, "run": {"acme/a1"}}).expect(t, "read-only apply", http.StatusForbidden)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != "This console is read-only: writes are disabled." {
		t.Errorf("read-only refusal %q", got)
	}
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Errorf("a1 after refused bulk posts: %s", got)
	}
}

// consoleList is the text of the list with id.
func consoleList(t *testing.T, body, id string) string {
	t.Helper()
	start := strings.Index(body, `<ul id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no list %s in:\n%s", id, body)
	}
	end := strings.Index(body[start:], "</ul>")
	return testkit.ConsoleText(body[start : start+end])
}

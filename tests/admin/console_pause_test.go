package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consolePaused reads a partition's pause flag and version.
func consolePaused(t testing.TB, d consoleDomain, scope string) string {
	t.Helper()
	var paused bool
	var version int64
	if err := d.pool.QueryRow(testkit.Context(t), `select paused, partition_version from docket_claim_partitions where scope_key = $1`, scope).
		Scan(&paused, &version); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("paused=%v@%d", paused, version)
}

// The tenant page's Pause button pauses the tenant as a compare-and-set on
// the partition version, the pages show it, Resume undoes it, and a stale
// form changes nothing.
func TestConsolePauseResume(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, true, nil)
	first, second := newConsoleClient(t, srv), newConsoleClient(t, srv)
	page := first.get("/tenants/acme").expect(t, "acme", http.StatusOK)
	stalePage := second.get("/tenants/acme").expect(t, "acme, second tab", http.StatusOK)
	if got := testkit.ConsoleFacts(t, page.body, "paused"); got != "no" {
		t.Fatalf("paused fact %q, want no", got)
	}
	form := consoleForm(t, page.body, "pause-form")
	if want := (url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "expected_version": {"0"}, "op": {"pause"}}); form.Encode() != want.Encode() {
		t.Fatalf("pause form %v, want %v", form, want)
	}
	r := first.post("/tenants/acme/pause", form).expect(t, "pause", http.StatusSeeOther)
	if r.location != consolePrefix+"/tenants/acme?done=tenant-pause&version=1" {
		t.Fatalf("pause redirects to %q", r.location)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=true@1" {
		t.Fatalf("after pause: %s", got)
	}
	r = first.getURL(r.location).expect(t, "after pause", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Tenant paused (partition version 1)." {
		t.Errorf("notice %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "paused"); got != "yes: no run of it is admitted or leased" {
		t.Errorf("paused fact %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "resume"); got != "Resume tenant" {
		t.Errorf("resume button %q", got)
	}
	resumeForm := consoleForm(t, r.body, "pause-form")
	rows := testkit.ConsoleTable(t, first.get("/tenants").expect(t, "tenants", http.StatusOK).body, "tenants")
	testkit.ExpectRows(t, "tenants with acme paused", consoleAges(rows[1:2]), "acme | 2 | default | 0 (0/0) | 2 | AGE | 0 | 4 | 0 | 0 | — | — | yes")

	// The second tab's form is for version 0: refused, nothing changed.
	staleForm := consoleForm(t, stalePage.body, "pause-form")
	r = second.post("/tenants/acme/pause", staleForm).expect(t, "stale pause", http.StatusConflict)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != "Stale pause or resume: the page was for partition version 0, but the partition is now at version 1. Nothing was changed; the page shows the tenant as it is now." {
		t.Errorf("stale message %q", got)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=true@1" {
		t.Fatalf("after the stale pause: %s", got)
	}

	r = first.post("/tenants/acme/pause", resumeForm).expect(t, "resume", http.StatusSeeOther)
	if r.location != consolePrefix+"/tenants/acme?done=tenant-resume&version=2" {
		t.Fatalf("resume redirects to %q", r.location)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=false@2" {
		t.Fatalf("after resume: %s", got)
	}
	r = first.post("/tenants/acme/pause", url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "expected_version": {"2"}, "op": {"stop"}}).
		expect(t, "unknown op", http.StatusBadRequest)
	if got := consolePaused(t, d, "acme"); got != "paused=false@2" {
		t.Fatalf("after an unknown op: %s", got)
	}
}

// consoleDomainPaused reads the domain's pause flag and policy version.
func consoleDomainPaused(t testing.TB, d consoleDomain) string {
	t.Helper()
	var paused bool
	var version int64
	if err := d.pool.QueryRow(testkit.Context(t), `select paused, policy_version from docket_claim_policy where id = 1`).
		Scan(&paused, &version); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("paused=%v@%d", paused, version)
}

// The domain page's Pause button pauses the whole domain as a
// compare-and-set on the policy version, the page shows it, Resume undoes
// it, and a stale form changes nothing.
func TestConsoleDomainPauseResume(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, true, nil)
	first, second := newConsoleClient(t, srv), newConsoleClient(t, srv)
	before := consoleDomainPaused(t, d)
	page := first.get("/").expect(t, "domain", http.StatusOK)
	stalePage := second.get("/").expect(t, "domain, second tab", http.StatusOK)
	if got := testkit.ConsoleFacts(t, page.body, "domain-paused"); got != "no" {
		t.Fatalf("paused fact %q, want no", got)
	}
	version := strings.Split(before, "@")[1]
	form := consoleForm(t, page.body, "domain-pause-form")
	if want := (url.Values{"csrf_token": {consoleCSRF(t, page.body)}, "expected_version": {version}, "op": {"pause"}}); form.Encode() != want.Encode() {
		t.Fatalf("pause form %v, want %v", form, want)
	}
	r := first.post("/domain/pause", form).expect(t, "pause", http.StatusSeeOther)
	next := fmt.Sprint(mustAtoi(t, version) + 1)
	if r.location != consolePrefix+"/?done=domain-pause&version="+next {
		t.Fatalf("pause redirects to %q", r.location)
	}
	if got := consoleDomainPaused(t, d); got != "paused=true@"+next {
		t.Fatalf("after pause: %s", got)
	}
	r = first.getURL(r.location).expect(t, "after pause", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Domain paused (policy version "+next+"): no run is admitted or leased until it is resumed." {
		t.Errorf("notice %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "domain-paused"); got != "yes: no run is admitted or leased" {
		t.Errorf("paused fact %q", got)
	}
	resumeForm := consoleForm(t, r.body, "domain-pause-form")

	r = second.post("/domain/pause", consoleForm(t, stalePage.body, "domain-pause-form")).expect(t, "stale pause", http.StatusConflict)
	if got, want := testkit.ConsoleFacts(t, r.body, "error"), "Stale pause or resume: the page was for policy version "+version+", but the policy is now at version "+next+". Nothing was changed; the page shows the domain as it is now."; got != want {
		t.Errorf("stale message %q, want %q", got, want)
	}
	if got := consoleDomainPaused(t, d); got != "paused=true@"+next {
		t.Fatalf("after the stale pause: %s", got)
	}
	r = first.post("/domain/pause", resumeForm).expect(t, "resume", http.StatusSeeOther)
	last := fmt.Sprint(mustAtoi(t, next) + 1)
	if r.location != consolePrefix+"/?done=domain-resume&version="+last {
		t.Fatalf("resume redirects to %q", r.location)
	}
	if got := consoleDomainPaused(t, d); got != "paused=false@"+last {
		t.Fatalf("after resume: %s", got)
	}
}

// mustAtoi reads a decimal the test itself formatted.
func mustAtoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

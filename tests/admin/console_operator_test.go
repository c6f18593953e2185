package admin

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consoleSchedules adds the schedules the schedules tests read, anchored on
// 2026-01-01T00:00Z so their ticks are fixed:
//
//	(tenantless) hourly   every 1h, skip          next 01:00Z
//	acme         nightly  cron 0 9 * * * Paris    next 08:00Z, last tick set
//	acme         often    every 5m, all, paused
//	beta         weekly   cron @weekly UTC        next 2026-01-04
func consoleSchedules(t testing.TB, d consoleDomain) {
	t.Helper()
	admin, err := docket.NewAdmin(testkit.Context(t), d.pool, docket.AdminConfig{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range []docket.NewSchedule{
		{Scope: docket.Tenantless, Name: "hourly", GraphID: "sweep", Every: time.Hour},
		{Scope: docket.Tenant("acme"), Name: "nightly", GraphID: "bill", Cron: "0 9 * * *", TimeZone: "Europe/Paris"},
		{Scope: docket.Tenant("acme"), Name: "often", GraphID: "send", Every: 5 * time.Minute, MissedTicks: docket.MissedAll},
		{Scope: docket.Tenant("beta"), Name: "weekly", GraphID: "send", Cron: "@weekly"},
	} {
		s.GraphHash, s.State, s.Start = "h1", json.RawMessage(`{}`), start
		if _, err := admin.AddSchedule(testkit.Context(t), s); err != nil {
			t.Fatalf("add %s: %v", s.Name, err)
		}
	}
	if _, err := admin.PauseSchedule(testkit.Context(t), docket.Tenant("acme"), "often", docket.ScheduleWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	testkit.ExecSQL(t, d.pool, `update docket_schedules set paused_at = '2026-01-02T00:00:00Z' where name = 'often'`)
	testkit.ExecSQL(t, d.pool, `update docket_schedules set last_tick_at = '2025-12-31T08:00:00Z' where name = 'nightly'`)
}

// consoleSchedule reads a schedule's paused flag and version as
// "paused@2" or "running@1".
func consoleSchedule(t testing.TB, d consoleDomain, name string) string {
	t.Helper()
	var paused bool
	var version int64
	if err := d.pool.QueryRow(testkit.Context(t), `select paused, version from docket_schedules where name = $1`, name).Scan(&paused, &version); err != nil {
		t.Fatal(err)
	}
	state := "running"
	if paused {
		state = "paused"
	}
	return state + "@" + strconv.FormatInt(version, 10)
}

// The schedules page lists every schedule in (scope, name) order with its
// graph, cadence, missed-ticks policy, pause, next and last tick and
// version, a keyset page at a time, of every scope or one; the nav links
// it, and a read-only console renders no button.
func TestConsoleSchedulesPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	consoleSchedules(t, d)
	const (
		hourly  = "(tenantless) | hourly | sweep | every 1h0m0s | skip | no | 2026-01-01 01:00:00Z overdue | — | 1 | its runs"
		nightly = "acme | nightly | bill | cron 0 9 * * * (Europe/Paris) | skip | no | 2026-01-01 08:00:00Z overdue | 2025-12-31 08:00:00Z | 1 | its runs"
		often   = "acme | often | send | every 5m0s | all | since 2026-01-02 00:00:00Z | — (paused) | — | 2 | its runs"
		weekly  = "beta | weekly | send | cron @weekly (UTC) | skip | no | 2026-01-04 00:00:00Z overdue | — | 1 | its runs"
	)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/schedules").expect(t, "schedules", http.StatusOK)
	testkit.ExpectRows(t, "schedules", testkit.ConsoleTable(t, r.body, "schedules"), hourly, nightly, often, weekly)
	if !strings.Contains(r.body, `<a href="/ops/docket/schedules" aria-current="page">Schedules</a>`) {
		t.Errorf("the nav does not link the schedules page as current")
	}
	if strings.Contains(r.body, "<form method=\"post\"") {
		t.Errorf("a read-only console renders a schedule button")
	}
	if !strings.Contains(c.get("/").body, `<a href="/ops/docket/schedules">Schedules</a>`) {
		t.Errorf("the domain page's nav lacks the schedules page")
	}

	// Keyset pages of two, the cursor crossing scopes.
	r = c.get("/schedules?limit=2").expect(t, "page 1", http.StatusOK)
	testkit.ExpectRows(t, "page 1", testkit.ConsoleTable(t, r.body, "schedules"), hourly, nightly)
	next := consoleLink(r.body, "next-page")
	if next != consolePrefix+"/schedules?after_name=nightly&after_t=acme&limit=2" {
		t.Fatalf("next link %q", next)
	}
	r = c.getURL(next).expect(t, "page 2", http.StatusOK)
	testkit.ExpectRows(t, "page 2", testkit.ConsoleTable(t, r.body, "schedules"), often, weekly)
	if consoleLink(r.body, "next-page") != "" || consoleLink(r.body, "first-page") != consolePrefix+"/schedules?limit=2" {
		t.Errorf("page 2 links: next %q, first %q", consoleLink(r.body, "next-page"), consoleLink(r.body, "first-page"))
	}
	r = c.get("/schedules?limit=1&after_tl=1&after_name=hourly").expect(t, "after the tenantless one", http.StatusOK)
	testkit.ExpectRows(t, "after hourly", testkit.ConsoleTable(t, r.body, "schedules"), nightly)

	// One scope's schedules.
	testkit.ExpectRows(t, "acme", testkit.ConsoleTable(t, c.get("/schedules?tenant=acme").body, "schedules"), nightly, often)
	testkit.ExpectRows(t, "tenantless", testkit.ConsoleTable(t, c.get("/schedules?tenantless=1").body, "schedules"), hourly)
	testkit.ExpectRows(t, "nobody", testkit.ConsoleTable(t, c.get("/schedules?tenant=nobody").body, "schedules"), "No schedules.")
	c.get("/schedules?limit=0").expect(t, "limit 0", http.StatusBadRequest)
}

// Pause and resume are compare-and-set on the version the row's form
// holds: each redirects with a notice and changes the schedule as the facade
// does; a stale form is 409 with both versions named and nothing changed; an
// unknown action or schedule is 404, and a read-only console refuses with
// 403.
func TestConsoleScheduleActions(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	consoleSchedules(t, d)
	srv := consoleServer(t, d.pool, true, nil)
	c, second := newConsoleClient(t, srv), newConsoleClient(t, srv)
	page := c.get("/schedules").expect(t, "schedules", http.StatusOK)
	stalePage := second.get("/schedules").expect(t, "schedules, second tab", http.StatusOK)
	rows := testkit.ConsoleTable(t, page.body, "schedules")
	for i, want := range []string{"Pause Remove…", "Pause Remove…", "Resume Remove…", "Pause Remove…"} {
		if !strings.HasSuffix(rows[i], " | "+want) {
			t.Errorf("row %d %q does not end in its %s button", i, rows[i], want)
		}
	}
	form := consoleForm(t, page.body, "pause-acme-nightly")
	if form.Get("expected_version") != "1" {
		t.Fatalf("the pause form holds %v", form)
	}
	r := c.post("/schedules/acme/nightly/pause", form).expect(t, "pause", http.StatusSeeOther)
	if r.location != consolePrefix+"/schedules?done=schedule-pause&version=2" {
		t.Fatalf("pause redirects to %q", r.location)
	}
	if got := consoleSchedule(t, d, "nightly"); got != "paused@2" {
		t.Fatalf("nightly after pause: %s", got)
	}
	r = c.getURL(r.location).expect(t, "after pause", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Schedule paused (schedule version 2)." {
		t.Errorf("pause notice %q", got)
	}
	var pausedAt time.Time
	if err := d.pool.QueryRow(testkit.Context(t), `select paused_at from docket_schedules where name = 'nightly'`).Scan(&pausedAt); err != nil {
		t.Fatal(err)
	}
	testkit.ExpectRows(t, "nightly paused", testkit.ConsoleTable(t, r.body, "schedules")[1:2],
		"acme | nightly | bill | cron 0 9 * * * (Europe/Paris) | skip | since "+consoleTime(pausedAt)+" | — (paused) | 2025-12-31 08:00:00Z | 2 | its runs | Resume Remove…")

	// The second tab still holds version 1.
	r = second.post("/schedules/acme/nightly/pause", consoleForm(t, stalePage.body, "pause-acme-nightly")).expect(t, "stale pause", http.StatusConflict)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != `Stale edit: the form was for version 1 of schedule "nightly" of acme, but the schedule is now at version 2. Nothing was changed; the list below holds the current version.` {
		t.Errorf("stale message %q", got)
	}
	if got := consoleForm(t, r.body, "resume-acme-nightly").Get("expected_version"); got != "2" {
		t.Errorf("the refused page's resume form holds version %q", got)
	}
	if got := consoleSchedule(t, d, "nightly"); got != "paused@2" {
		t.Fatalf("nightly after the stale pause: %s", got)
	}

	// Resume, from the refused page's current form; the tenantless scope has
	// its own path.
	r = second.post("/schedules/acme/nightly/resume", consoleForm(t, r.body, "resume-acme-nightly")).expect(t, "resume", http.StatusSeeOther)
	if r.location != consolePrefix+"/schedules?done=schedule-resume&version=3" {
		t.Fatalf("resume redirects to %q", r.location)
	}
	if got := consoleSchedule(t, d, "nightly"); got != "running@3" {
		t.Fatalf("nightly after resume: %s", got)
	}
	var next time.Time
	if err := d.pool.QueryRow(testkit.Context(t), `select next_tick_at from docket_schedules where name = 'nightly'`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	if !next.After(time.Now().Add(-time.Minute)) || next.UTC().Hour() != 8 {
		t.Errorf("nightly's next tick after resume %s, want the first 09:00 Paris after now", next)
	}
	r = second.getURL(r.location)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Schedule resumed (schedule version 3)." {
		t.Errorf("resume notice %q", got)
	}
	if got := testkit.ConsoleTable(t, r.body, "schedules")[1]; !strings.Contains(got, " | no | "+consoleTime(next)+" | ") {
		t.Errorf("nightly after resume reads %q", got)
	}
	c.post("/tenantless/schedules/hourly/pause", consoleForm(t, page.body, "pause-(tenantless)-hourly")).expect(t, "tenantless pause", http.StatusSeeOther)
	if got := consoleSchedule(t, d, "hourly"); got != "paused@2" {
		t.Fatalf("hourly after pause: %s", got)
	}

	token := consoleCSRF(t, page.body)
	for path, status := range map[string]int{
		"/schedules/acme/nightly/delete":  http.StatusNotFound,
		"/schedules/acme/missing/pause":   http.StatusNotFound,
		"/schedules/nobody/nightly/pause": http.StatusNotFound,
	} {
		c.post(path, url.Values{"csrf_token": {token}, "expected_version": {"3"}}).expect(t, path, status)
	}
	c.post("/schedules/acme/nightly/pause", url.Values{"csrf_token": {token}, "expected_version": {"x"}}).expect(t, "bad version", http.StatusBadRequest)
	c.post("/schedules/acme/nightly/pause", url.Values{"expected_version": {"3"}}).expect(t, "no token", http.StatusForbidden)
	readOnly := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	readOnly.post("/schedules/acme/nightly/pause", url.Values{"csrf_token": {token}, "expected_version": {"3"}}).expect(t, "read-only", http.StatusForbidden)
	if got := consoleSchedule(t, d, "nightly"); got != "running@3" {
		t.Fatalf("nightly after refused edits: %s", got)
	}
}

// Cancel asks first: the run page's Cancel opens a confirmation page that
// shows the run and posts the cancel with the CSRF token and the
// confirmation; keeping the run links back. A run its status does not let
// cancel gets the refusal instead, and a read-only console has no
// confirmation page.
func TestConsoleCancelConfirm(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	run := c.get("/runs/acme/a1").expect(t, "a1", http.StatusOK)
	if !strings.Contains(run.body, `<form method="get" action="/ops/docket/runs/acme/a1/cancel" class="inline">`) {
		t.Fatalf("the run page's cancel does not open the confirmation:\n%s", run.body)
	}
	r := c.get("/runs/acme/a1/cancel").expect(t, "confirm", http.StatusOK)
	for id, want := range map[string]string{
		"run-id": "a1", "scope": "acme", "graph": "send", "status": "running", "step": "0", "claim": "not held",
		"confirm-cancel": "Yes, cancel run a1",
	} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("confirm page %s = %q, want %q", id, got, want)
		}
	}
	if got := testkit.ConsoleFacts(t, r.body, "cancel-effect"); !strings.HasPrefix(got, "Cancelling sets the run's status to cancelled") {
		t.Errorf("effect %q", got)
	}
	if got := consoleLink(r.body, "keep-run"); got != consolePrefix+"/runs/acme/a1" {
		t.Errorf("keep link %q", got)
	}
	if !strings.Contains(r.body, `<form method="post" action="/ops/docket/runs/acme/a1/cancel" class="inline" id="cancel-form">`) {
		t.Errorf("the confirmation form does not post the cancel:\n%s", r.body)
	}
	form := consoleForm(t, r.body, "cancel-form")
	if form.Get("confirm") != "yes" || form.Get("csrf_token") != consoleCSRF(t, r.body) {
		t.Errorf("confirmation form %v", form)
	}
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Fatalf("a1 after opening the confirmation: %s", got)
	}
	r = c.post("/runs/acme/a1/cancel", form).expect(t, "confirmed", http.StatusSeeOther)
	if got := consoleStatus(t, d, "a1"); got != "cancelled" {
		t.Fatalf("a1 after the confirmed cancel: %s", got)
	}
	if got := testkit.ConsoleFacts(t, c.getURL(r.location).body, "notice"); got != "Run cancelled." {
		t.Errorf("notice %q", got)
	}

	// The tenantless scope's confirmation, and refusals.
	r = c.get("/tenantless/runs/n1/cancel").expect(t, "n1 confirm", http.StatusUnprocessableEntity)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != `run "n1" is failed; cancel applies only to a run that is running, waiting or poisoned; use "Retry" to run it again` {
		t.Errorf("cancel of a failed run: %q", got)
	}
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, graph_id, graph_hash, state, status) values ('n2', 'send', 'h1', '{}', 'waiting')`)
	r = c.get("/tenantless/runs/n2/cancel").expect(t, "n2 confirm", http.StatusOK)
	if !strings.Contains(r.body, `action="/ops/docket/tenantless/runs/n2/cancel" class="inline" id="cancel-form"`) {
		t.Errorf("tenantless confirmation form:\n%s", r.body)
	}
	c.get("/runs/acme/missing/cancel").expect(t, "missing", http.StatusNotFound)
	readOnly := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	readOnly.get("/runs/acme/a2/cancel").expect(t, "read-only confirm", http.StatusForbidden)
	for run, want := range map[string]string{"n1": "failed", "n2": "waiting", "a2": "running"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Errorf("%s: %s, want %s", run, got, want)
		}
	}
}

// The tenants page and the tenant page count each scope's failed runs and
// age the head of its queue: the queued due run with the earliest wake_at,
// from the later of its wake_at and its insert time, on the database's
// clock.
func TestConsoleTenantExtras(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	// acme's queue: a1 due since an hour ago but inserted 20 minutes ago, a2
	// due since 30 minutes ago (inserted earlier); a1 heads it, waiting 20
	// minutes. x1's wake is past its insert, so it waits from its wake.
	testkit.ExecSQL(t, d.pool, `update docket_runs set wake_at = now() - interval '1 hour', inserted_at = now() - interval '20 minutes' where run_id = 'a1'`)
	testkit.ExecSQL(t, d.pool, `update docket_runs set wake_at = now() - interval '30 minutes', inserted_at = now() - interval '2 hours' where run_id = 'a2'`)
	testkit.ExecSQL(t, d.pool, `update docket_runs set wake_at = now() - interval '3 minutes', inserted_at = now() - interval '1 day' where run_id = 'x1'`)
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, finished_at)
		values ('af1', 'acme', 'send', 'h1', '{}', 'failed', now()), ('af2', 'acme', 'send', 'h1', '{}', 'failed', now())`)
	age := func(run string) int64 {
		return testkit.QueryInt64(t, d.pool, `select floor(extract(epoch from now() - greatest(wake_at, inserted_at)))::bigint from docket_runs where run_id = $1`, run)
	}
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	acmeBefore, xBefore := age("a1"), age("x1")
	r := c.get("/tenants").expect(t, "tenants", http.StatusOK)
	acmeAfter, xAfter := age("a1"), age("x1")
	cells := map[string][]string{}
	for _, row := range testkit.ConsoleTable(t, r.body, "tenants") {
		parts := strings.Split(row, " | ")
		cells[parts[0]] = parts
	}
	// The age cell (the sixth) and the failed count (the ninth).
	within := func(what, got string, lo, hi int64) {
		t.Helper()
		d, err := time.ParseDuration(got)
		if err != nil || int64(d/time.Second) < lo || int64(d/time.Second) > hi || d%time.Second != 0 {
			t.Errorf("%s: age %q, want whole seconds in [%d, %d]", what, got, lo, hi)
		}
	}
	within("acme", cells["acme"][5], acmeBefore, acmeAfter)
	within("XSS tenant", cells[consoleXSS][5], xBefore, xAfter)
	if acmeBefore < 20*60 || acmeAfter > 21*60 {
		t.Fatalf("acme's head waited %d..%d s, want about 20 minutes (a1's insert)", acmeBefore, acmeAfter)
	}
	for scope, want := range map[string]string{"acme": "2", "(tenantless)": "1", "beta": "0", "calm": "0", "zeta": "0", consoleXSS: "0"} {
		if got := cells[scope][8]; got != want {
			t.Errorf("%s failed runs %q, want %s", scope, got, want)
		}
	}
	for _, scope := range []string{"(tenantless)", "beta", "calm", "zeta"} {
		if got := cells[scope][5]; got != "—" {
			t.Errorf("%s oldest queued %q, want a dash", scope, got)
		}
	}
	var since time.Time
	if err := d.pool.QueryRow(testkit.Context(t), `select inserted_at from docket_runs where run_id = 'a1'`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.body, `<span title="waiting since `+consoleTime(since)+`">`) {
		t.Errorf("the age does not carry its start %s", consoleTime(since))
	}
	if got := consoleParagraph(t, r.body, "tenants-help"); !strings.HasPrefix(got, "Oldest queued is the age of the head of the scope's queue: of its queued runs (running, unclaimed, not admitted, not poisoned, wake_at due), the one with the earliest wake_at, which admission takes first. Its age is the database's now() minus the later of its wake_at and its insert time (inserted_at), to the whole second") {
		t.Errorf("help text %q", got)
	}

	// The sorts and keyset pages still work with the new columns.
	r = c.get("/tenants?sort=queued&limit=1").expect(t, "by queued", http.StatusOK)
	if rows := testkit.ConsoleTable(t, r.body, "tenants"); len(rows) != 1 || !strings.HasPrefix(rows[0], "acme | ") {
		t.Errorf("first by queued: %v", rows)
	}

	// The tenant page shows both facts.
	before := age("a1")
	r = c.get("/tenants/acme").expect(t, "acme", http.StatusOK)
	after := age("a1")
	oldest := testkit.ConsoleFacts(t, r.body, "oldest-queued")
	ageText, rest, _ := strings.Cut(oldest, " ")
	within("acme page", ageText, before, after)
	if rest != "(waiting since "+consoleTime(since)+")" {
		t.Errorf("acme oldest queued %q", oldest)
	}
	if got := testkit.ConsoleFacts(t, r.body, "failed"); got != "2" {
		t.Errorf("acme failed runs %q", got)
	}
	if got := testkit.ConsoleFacts(t, c.get("/tenants/beta").body, "oldest-queued"); got != "—" {
		t.Errorf("beta oldest queued %q", got)
	}
}

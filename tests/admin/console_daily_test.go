package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consoleRunIDs is the first cell (the run id) of each row of the runs
// table, or the table's one cell when it lists no run.
func consoleRunIDs(t *testing.T, body string, selectable bool) string {
	t.Helper()
	var ids []string
	for _, row := range testkit.ConsoleTable(t, body, "runs") {
		cells := strings.Split(row, " | ")
		if selectable && len(cells) > 1 {
			cells = cells[1:]
		}
		ids = append(ids, cells[0])
	}
	return strings.Join(ids, " ")
}

// consoleAdmin opens an Admin on the seeded domain.
func consoleAdmin(t *testing.T, d consoleDomain) *docket.Admin {
	t.Helper()
	admin, err := docket.NewAdmin(testkit.Context(t), d.pool, docket.AdminConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

// The runs page's search box finds runs by id or id prefix across every
// scope, in run id order, an exact id first; the filters and phase tabs
// narrow it (the tabs count nothing), the pager continues after the last
// id, and a start-time bound is refused.
func TestConsoleRunSearch(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))

	r := c.get("/runs?q=a").expect(t, "search a", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != "a1 a2 a3 ap" {
		t.Fatalf("search a lists %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "search-q"); got != "" || !strings.Contains(r.body, `name="q" value="a" id="search-q"`) {
		t.Errorf("the search box does not keep the query:\n%s", r.body)
	}
	if got := testkit.ConsoleFacts(t, r.body, "tab-queued"); got != "queued" {
		t.Errorf("a search's queued tab reads %q, want no count", got)
	}
	if got := consoleLink(r.body, "tab-queued"); got != consolePrefix+"/runs?phase=queued&q=a" {
		t.Errorf("a search's queued tab links %q", got)
	}
	if !strings.Contains(r.body, "<h1>Runs whose id starts with &#34;a&#34;</h1>") {
		t.Errorf("the search's title is missing:\n%s", r.body)
	}
	for path, want := range map[string]string{
		"/runs?q=a1":                     "a1",
		"/runs?q=a&phase=queued":         "a1 a2",
		"/runs?q=a&status=waiting":       "a3",
		"/runs?q=a&graph=bill":           "a3",
		"/runs?q=a&tenant=beta":          "No runs.",
		"/runs?q=n&tenantless=1":         "n1",
		"/runs?q=b&tenant=beta":          "b1 b2 b3",
		"/runs?q=zzz":                    "No runs.",
		"/runs?q=+x1+":                   "x1",
		"/runs?q=a&phase=queued&limit=1": "a1",
	} {
		if got := consoleRunIDs(t, c.get(path).expect(t, path, http.StatusOK).body, false); got != want {
			t.Errorf("%s lists %q, want %q", path, got, want)
		}
	}
	// Pages of two continue strictly after the last id.
	r = c.get("/runs?q=a&limit=2").expect(t, "page 1", http.StatusOK)
	next := consoleLink(r.body, "next-page")
	if next != consolePrefix+"/runs?after_run=a2&limit=2&q=a" {
		t.Fatalf("next link %q", next)
	}
	r = c.getURL(next).expect(t, "page 2", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != "a3 ap" {
		t.Errorf("page 2 lists %q", got)
	}
	if consoleLink(r.body, "next-page") != "" || consoleLink(r.body, "first-page") != consolePrefix+"/runs?limit=2&q=a" {
		t.Errorf("page 2 links: next %q, first %q", consoleLink(r.body, "next-page"), consoleLink(r.body, "first-page"))
	}
	r = c.get("/runs?q=a&from=2026-01-01T00:00:00Z").expect(t, "search with a start bound", http.StatusBadRequest)
	if got := testkit.ConsoleFacts(t, r.body, "error"); !strings.Contains(got, "a run id search takes no start-time bounds") {
		t.Errorf("refusal %q", got)
	}
}

// Admin.SearchRuns matches by bytes, whatever the last character of the
// prefix: a multi-byte one and U+10FFFF (whose successor is the previous
// character's) alike; a prefix of U+10FFFF alone, an empty one and a bad
// filter are ErrInvalidArgument.
func TestAdminSearchRunsPrefixBounds(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	for _, id := range []string{"café-1", "café-2", "cafê-3", "cafe-4", "caf\U0010FFFF-5", "cag-6", "caf-7", "\U0010FFFF-8"} {
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]string{
		"café":          "café-1 café-2",
		"caf":           "caf-7 cafe-4 café-1 café-2 cafê-3 caf\U0010FFFF-5",
		"caf\U0010FFFF": "caf\U0010FFFF-5",
		"café-2":        "café-2",
		"\U0010FFFF-":   "\U0010FFFF-8",
	} {
		page, err := client.SearchRuns(ctx, docket.SearchRunsRequest{Prefix: prefix})
		if err != nil {
			t.Fatalf("search %q: %v", prefix, err)
		}
		var ids []string
		for _, r := range page.Runs {
			ids = append(ids, r.RunID)
		}
		if got := strings.Join(ids, " "); got != want || page.Next != "" {
			t.Errorf("search %q: %q (next %q), want %q", prefix, got, page.Next, want)
		}
	}
	page, err := client.SearchRuns(ctx, docket.SearchRunsRequest{Prefix: "caf", Limit: 2, After: "cafe-4"})
	if err != nil || len(page.Runs) != 2 || page.Runs[0].RunID != "café-1" || page.Next != "café-2" {
		t.Fatalf("a page after cafe-4: %+v, %v", page, err)
	}
	for _, req := range []docket.SearchRunsRequest{
		{Prefix: ""}, {Prefix: "\U0010FFFF\U0010FFFF"}, {Prefix: "a", Phase: "running"}, {Prefix: "a", Limit: -1},
		{Prefix: strings.Repeat("a", docket.MaxIdentifierBytes+1)}, {Prefix: "a\x00"},
	} {
		if _, err := client.SearchRuns(ctx, req); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("SearchRuns(%q) error %v, want ErrInvalidArgument", req.Prefix, err)
		}
	}
}

// The queued tab lists the queued runs in admission order by default: due
// time, then insertion, oldest first, across scopes and in one; pages
// continue after the last run; "newest first" switches to the start-time
// order; a paused tenant's runs leave the tab.
func TestConsoleQueuedAdmissionOrder(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	// The oldest due run of all, of beta, started last.
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, started_at, wake_at)
		values ('old', 'beta', 'send', 'h1', '{}', 'running', '2026-01-01T01:00:00Z', '2026-01-01T00:00:00Z')`)
	want := consoleQueryString(t, d, `select string_agg(run_id, ' ' order by wake_at, id) from docket_runs
		where status = 'running' and poisoned_at is null and claim_token is null and tenant_admitted_at is null and wake_at <= now()`)
	if want != "old a1 a2 x1" {
		t.Fatalf("the database's FIFO order: %q", want)
	}
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/runs?phase=queued").expect(t, "queued", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != want {
		t.Fatalf("the queued tab lists %q, want %q", got, want)
	}
	if !strings.Contains(r.body, `id="order-admission" aria-current="page"`) || consoleLink(r.body, "order-newest") != consolePrefix+"/runs?order=newest&phase=queued" {
		t.Errorf("the order links: newest %q\n%s", consoleLink(r.body, "order-newest"), r.body)
	}
	r = c.get("/runs?phase=queued&order=newest").expect(t, "newest", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != "old x1 a2 a1" {
		t.Errorf("newest first lists %q", got)
	}
	if consoleLink(r.body, "tab-all") != consolePrefix+"/runs?" {
		t.Errorf("the all tab keeps the order: %q", consoleLink(r.body, "tab-all"))
	}
	// Pages of two.
	r = c.get("/runs?phase=queued&limit=2").expect(t, "page 1", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != "old a1" {
		t.Fatalf("page 1 lists %q", got)
	}
	next, err := url.Parse(consoleLink(r.body, "next-page"))
	if err != nil || next.Query().Get("after_run") != "a1" || next.Query().Get("phase") != "queued" || next.Query().Get("limit") != "2" {
		t.Fatalf("next link %q (%v)", next, err)
	}
	wake := consoleQueryString(t, d, `select to_char(wake_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') from docket_runs where run_id = 'a1'`)
	if got, _ := time.Parse(time.RFC3339Nano, next.Query().Get("after_wake")); !got.Equal(mustTime(t, wake)) {
		t.Fatalf("the cursor's due time %q, a1's %q", next.Query().Get("after_wake"), wake)
	}
	r = c.getURL(next.String()).expect(t, "page 2", http.StatusOK)
	if got := consoleRunIDs(t, r.body, false); got != "a2 x1" || consoleLink(r.body, "next-page") != "" {
		t.Errorf("page 2 lists %q, next %q", got, consoleLink(r.body, "next-page"))
	}
	for path, want := range map[string]string{
		"/runs?phase=queued&tenant=acme":                "a1 a2",
		"/runs?phase=queued&tenant=acme&status=running": "a1 a2",
		"/runs?phase=queued&tenant=acme&status=waiting": "No runs.",
		"/runs?phase=queued&from=2026-01-01T00:01:30Z":  "old a2 x1",
		"/runs?phase=queued&to=2026-01-01T00:08:00Z":    "a1 a2",
		"/runs?phase=queued&graph=bill":                 "No runs.",
	} {
		if got := consoleRunIDs(t, c.get(path).expect(t, path, http.StatusOK).body, false); got != want {
			t.Errorf("%s lists %q, want %q", path, got, want)
		}
	}
	// A paused tenant's runs are paused, not queued.
	if _, err := consoleAdmin(t, d).PauseTenant(testkit.Context(t), docket.Tenant("acme"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=true@1" {
		t.Fatalf("acme after pause: %s", got)
	}
	if got := consoleRunIDs(t, c.get("/runs?phase=queued").body, false); got != "old x1" {
		t.Errorf("the queued tab with acme paused lists %q", got)
	}
}

// mustTime parses an RFC 3339 time.
func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The ring page shows a paused tenant's position as paused, not eligible,
// and its legend names the state; a paused domain's positions with
// unfinished runs are all paused.
func TestConsoleRingShowsPausedTenant(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	acme := func() string {
		t.Helper()
		for _, row := range testkit.ConsoleTable(t, c.get("/ring").expect(t, "ring", http.StatusOK).body, "ring") {
			if strings.Contains(row, " | acme | ") {
				return row
			}
		}
		t.Fatal("no acme row on the ring page")
		return ""
	}
	if got := acme(); got != "1 | acme | eligible | 4" {
		t.Fatalf("acme before the pause: %q", got)
	}
	if _, err := consoleAdmin(t, d).PauseTenant(testkit.Context(t), docket.Tenant("acme"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=true@1" {
		t.Fatalf("acme after pause: %s", got)
	}
	if got := acme(); got != "1 | acme | paused | 4" {
		t.Fatalf("acme after the pause: %q", got)
	}
	r := c.get("/ring")
	if !strings.Contains(r.body, `<span class="swatch paused"></span> paused `) || !strings.Contains(r.body, `class="dot paused"`) {
		t.Errorf("the legend or the circle lacks the paused state:\n%s", r.body)
	}
	// A paused domain pauses every position with unfinished runs.
	if _, err := consoleAdmin(t, d).PauseDomain(testkit.Context(t), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_claim_policy where paused`); n != 1 {
		t.Fatalf("paused policy rows: %d", n)
	}
	var states []string
	for _, row := range testkit.ConsoleTable(t, c.get("/ring").body, "ring") {
		cells := strings.Split(row, " | ")
		states = append(states, cells[1]+"="+cells[2])
	}
	if got := strings.Join(states, " "); got != "zeta=empty acme=paused beta=paused (tenantless)=empty "+consoleXSS+"=paused calm=paused" {
		t.Errorf("ring states with the domain paused: %q", got)
	}
}

// Remove asks first: the schedule's Remove opens a confirmation page that
// shows it and posts the removal with the CSRF token, the confirmation and
// the version; a post without the confirmation is sent to that page, a
// stale version is 409, and the removal deletes the schedule and keeps its
// runs. "Its runs" lists the runs its ticks inserted, in its scope only.
func TestConsoleScheduleRemoveAndRuns(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	consoleSchedules(t, d)
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, d.pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	// Take the ticks due at 08:30 on the first day: hourly's and nightly's
	// 08:00 ticks (missed ticks skipped).
	if err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		_, err := client.TakeDueTicksTx(ctx, tx, time.Date(2026, 1, 1, 8, 30, 0, 0, time.UTC), 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// A run of another scope under nightly's tick prefix, which its link
	// leaves out.
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		values ('schedule:acme/nightly@elsewhere', 'beta', 'bill', 'h1', '{}', 'running', now())`)
	if got := consoleQueryString(t, d, `select string_agg(run_id || '@' || coalesce(tenant_id, '-'), ' ' order by run_id) from docket_runs where run_id like 'schedule:%'`); got !=
		"schedule:acme/nightly@2026-01-01T08:00:00Z@acme schedule:acme/nightly@elsewhere@beta schedule:hourly@2026-01-01T08:00:00Z@-" {
		t.Fatalf("tick runs in the database: %s", got)
	}
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	page := c.get("/schedules").expect(t, "schedules", http.StatusOK)
	for id, want := range map[string]string{
		"runs-acme-nightly":        consolePrefix + "/runs?q=schedule%3Aacme%2Fnightly%40&tenant=acme",
		"runs-(tenantless)-hourly": consolePrefix + "/runs?q=schedule%3Ahourly%40&tenantless=1",
	} {
		link := consoleLink(page.body, id)
		if link != want {
			t.Errorf("%s links %q, want %q", id, link, want)
			continue
		}
		runs := c.getURL(link).expect(t, link, http.StatusOK)
		wantRun := map[string]string{"runs-acme-nightly": "schedule:acme/nightly@2026-01-01T08:00:00Z", "runs-(tenantless)-hourly": "schedule:hourly@2026-01-01T08:00:00Z"}[id]
		if got := consoleRunIDs(t, runs.body, true); got != wantRun {
			t.Errorf("%s lists %q, want %q", id, got, wantRun)
		}
	}

	if !strings.Contains(page.body, `<form method="get" action="/ops/docket/schedules/beta/weekly/remove" class="inline">`) {
		t.Fatalf("weekly's Remove does not open the confirmation:\n%s", page.body)
	}
	r := c.get("/schedules/beta/weekly/remove").expect(t, "confirm", http.StatusOK)
	for id, want := range map[string]string{
		"scope": "beta", "name": "weekly", "graph": "send", "cadence": "cron @weekly (UTC)", "version": "1",
		"confirm-remove": "Yes, remove schedule weekly",
	} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("confirm page %s = %q, want %q", id, got, want)
		}
	}
	if got := consoleLink(r.body, "keep-schedule"); got != consolePrefix+"/schedules" {
		t.Errorf("keep link %q", got)
	}
	form := consoleForm(t, r.body, "confirm-remove")
	if form.Get("confirm") != "yes" || form.Get("expected_version") != "1" || form.Get("csrf_token") == "" {
		t.Fatalf("the confirmation form holds %v", form)
	}
	// Without the confirmation: sent to the page, nothing removed.
	noConfirm := url.Values{"csrf_token": {form.Get("csrf_token")}, "expected_version": {"1"}}
	if r := c.post("/schedules/beta/weekly/remove", noConfirm); r.status != http.StatusSeeOther || r.location != consolePrefix+"/schedules/beta/weekly/remove" {
		t.Fatalf("a removal without confirmation: %d to %q", r.status, r.location)
	}
	if got := testkit.QueryInt64(t, d.pool, `select count(*) from docket_schedules where name = 'weekly'`); got != 1 {
		t.Fatalf("weekly after the unconfirmed post: %d rows", got)
	}
	// A stale confirmation: weekly was paused since.
	if _, err := consoleAdmin(t, d).PauseSchedule(ctx, docket.Tenant("beta"), "weekly", docket.ScheduleWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = c.post("/schedules/beta/weekly/remove", form).expect(t, "stale removal", http.StatusConflict)
	if got := testkit.ConsoleFacts(t, r.body, "error"); got != `Stale edit: the form was for version 1 of schedule "weekly" of beta, but the schedule is now at version 2. Nothing was changed; the list below holds the current version.` {
		t.Errorf("stale message %q", got)
	}
	if got := consoleSchedule(t, d, "weekly"); got != "paused@2" {
		t.Fatalf("weekly after the stale removal: %s", got)
	}
	form = consoleForm(t, c.get("/schedules/beta/weekly/remove").body, "confirm-remove")
	r = c.post("/schedules/beta/weekly/remove", form).expect(t, "removal", http.StatusSeeOther)
	if r.location != consolePrefix+"/schedules?done=schedule-remove&version=2" {
		t.Fatalf("removal redirects to %q", r.location)
	}
	if got := testkit.QueryInt64(t, d.pool, `select count(*) from docket_schedules where name = 'weekly'`); got != 0 {
		t.Fatalf("weekly after the removal: %d rows", got)
	}
	r = c.getURL(r.location)
	if got := testkit.ConsoleFacts(t, r.body, "notice"); got != "Schedule removed (it was at version 2); the runs it inserted stay." {
		t.Errorf("removal notice %q", got)
	}
	// The tenantless scope has its own path; the tick run stays.
	form = consoleForm(t, c.get("/tenantless/schedules/hourly/remove").expect(t, "hourly confirm", http.StatusOK).body, "confirm-remove")
	c.post("/tenantless/schedules/hourly/remove", form).expect(t, "hourly removal", http.StatusSeeOther)
	if got := testkit.QueryInt64(t, d.pool, `select count(*) from docket_schedules where name = 'hourly'`); got != 0 {
		t.Fatalf("hourly after the removal: %d rows", got)
	}
	if got := consoleStatus(t, d, "schedule:hourly@2026-01-01T08:00:00Z"); got != "running" {
		t.Fatalf("hourly's tick run after the removal: %s", got)
	}
	c.get("/schedules/beta/weekly/remove").expect(t, "a removed schedule", http.StatusNotFound)
	c.post("/schedules/acme/nightly/remove", url.Values{"confirm": {"yes"}, "expected_version": {"1"}}).expect(t, "no token", http.StatusForbidden)
	readOnly := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	readOnly.get("/schedules/acme/nightly/remove").expect(t, "read-only confirm", http.StatusForbidden)
	if got := consoleSchedule(t, d, "nightly"); got != "running@1" {
		t.Fatalf("nightly after refused removals: %s", got)
	}
}

// consoleQueryString reads one text value.
func consoleQueryString(t *testing.T, d consoleDomain, sql string) string {
	t.Helper()
	var v string
	if err := d.pool.QueryRow(testkit.Context(t), sql).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

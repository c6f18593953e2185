package admin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consoleScreenshotsEnv names a directory that receives the browser test's
// screenshots (make console-screenshots sets it to docs/console).
const consoleScreenshotsEnv = "DOCKET_CONSOLE_SCREENSHOTS"

// consoleChromium returns the Chromium binary the browser test drives:
// Debian's chromium package. Nothing downloads a browser: without one the
// test fails, except under -short.
func consoleChromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if testing.Short() {
			t.Skip("no chromium on PATH (-short)")
		}
		t.Fatalf("the console browser test needs Debian's chromium package (apt-get install chromium): %v", err)
	}
	return path
}

// consoleBrowser starts a headless Chromium for the test and returns the
// context of its first tab. --no-sandbox lets it run as root in a container
// as well as as a normal user.
func consoleBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(consoleChromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return browserCtx
}

// consoleShots writes PNG screenshots to $DOCKET_CONSOLE_SCREENSHOTS or a
// temporary directory.
func consoleShots(t *testing.T) func(ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(consoleScreenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// consoleDo runs browser steps and fails the test on error.
func consoleDo(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// consoleBrowserText reads an element's text.
func consoleBrowserText(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(text)
}

// A real browser drives the console: the domain page, sorting tenants,
// opening a tenant, changing its cap, the stale refusal of a second browser
// context holding the old form and applying its edit on the new version,
// cancelling a run through its confirmation page, searching runs by id
// prefix and exact id, the queued tab in admission order and newest first,
// a paused tenant on the ring, pausing and resuming a schedule, its overdue
// tick, its runs and its removal through a confirmation page, and the
// queues page of an all-domains console, with the database checked after
// each step and a screenshot of each page. The domain page's
// live refresh is seen too, so the script runs under the page's CSP.
func TestConsoleBrowser(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	consoleSchedules(t, d)
	srv := consoleServer(t, d.pool, true, nil)
	base := srv.URL + consolePrefix
	tab := consoleBrowser(t)
	shot := consoleShots(t)

	consoleDo(t, tab, "domain page", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#policy"))
	if got := consoleBrowserText(t, tab, "#engine") + " " + consoleBrowserText(t, tab, "#ring-size"); got != "tenant_fair 4" {
		t.Fatalf("domain page shows %q", got)
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_claim_schedule where unfinished_count > 0`); n != 4 {
		t.Fatalf("ring size in the database: %d", n)
	}
	shot(tab, "domain")
	// The live section refreshes in place (every 5 s): a run cancelled now
	// shows up without a reload.
	testkit.ExecSQL(t, d.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, finished_at)
		values ('z9', 'acme', 'send', 'h1', '{}', 'cancelled', now())`)
	consoleDo(t, tab, "live refresh", chromedp.WaitVisible(chromedp.Search(`//td[@id="runs-cancelled"][normalize-space()="1"]`)))

	consoleDo(t, tab, "tenants page", chromedp.Click(`nav a[href$="/tenants"]`), chromedp.WaitVisible("#tenants"))
	consoleDo(t, tab, "sort by unfinished", chromedp.Click("#sort-unfinished"), chromedp.WaitVisible(`#sort-unfinished[aria-current]`))
	if got := consoleBrowserText(t, tab, "#tenants tbody tr:first-child td:first-child"); got != "acme" {
		t.Fatalf("first tenant by unfinished: %q", got)
	}
	if n := testkit.QueryInt64(t, d.pool, `select unfinished_count from docket_claim_schedule where scope_key = 'acme'`); n != 4 {
		t.Fatalf("acme's unfinished count in the database: %d", n)
	}
	shot(tab, "tenants")

	consoleDo(t, tab, "open acme", chromedp.Click(`#tenants a[href$="/tenants/acme"]`), chromedp.WaitVisible("#cap-form"))
	if got := consoleBrowserText(t, tab, "#partition-version"); got != "0" {
		t.Fatalf("acme's version on the page: %q", got)
	}
	shot(tab, "tenant")

	// A second browser context (its own cookies) loads the same form now.
	second, cancelSecond := chromedp.NewContext(tab, chromedp.WithNewBrowserContext())
	defer cancelSecond()
	consoleDo(t, second, "second context", chromedp.Navigate(base+"/tenants/acme"), chromedp.WaitVisible("#cap-form"))

	consoleDo(t, tab, "set the cap", chromedp.SetValue(`#cap-form input[name="cap"]`, "3"), chromedp.Click("#cap-set"), chromedp.WaitVisible("#notice"))
	if got := consoleBrowserText(t, tab, "#cap") + " " + consoleBrowserText(t, tab, "#source"); got != "3 override" {
		t.Fatalf("after the edit the page shows %q", got)
	}
	if got := consoleOverride(t, d, "acme"); got != "3@1" {
		t.Fatalf("acme after the edit: %s", got)
	}

	consoleDo(t, second, "stale edit", chromedp.SetValue(`#cap-form input[name="cap"]`, "7"), chromedp.Click("#cap-set"), chromedp.WaitVisible("#error"))
	if got := consoleBrowserText(t, second, "#error"); !strings.HasPrefix(got, "Stale edit: the form was for version 0, but the override is now at version 1.") {
		t.Fatalf("stale edit message %q", got)
	}
	if got := consoleOverride(t, d, "acme"); got != "3@1" {
		t.Fatalf("acme after the stale edit: %s, want 3@1 unchanged", got)
	}
	// The refused page compares both edits and keeps the typed 7.
	if got := consoleBrowserText(t, second, "#stale tbody"); got != "Yours (refused)\t0\tcap 7\nStored now\t1\tcap 3 (override)" {
		t.Fatalf("stale comparison %q", got)
	}
	typed, err := chromedp.Run(second, chromedp.Value(`#cap-form input[name="cap"]`))
	if err != nil || typed != "7" {
		t.Fatalf("the cap field holds %q (%v) after the stale edit, want the typed 7", typed, err)
	}
	shot(second, "tenant-stale")
	consoleDo(t, second, "apply on the new version", chromedp.Click("#cap-apply"), chromedp.WaitVisible("#notice"))
	if got := consoleBrowserText(t, second, "#notice"); got != "Cap override saved (partition version 2)." {
		t.Fatalf("after applying the page says %q", got)
	}
	if got := consoleBrowserText(t, second, "#cap") + " " + consoleBrowserText(t, second, "#source"); got != "7 override" {
		t.Fatalf("after applying the page shows %q", got)
	}
	if got := consoleOverride(t, d, "acme"); got != "7@2" {
		t.Fatalf("acme after applying on the new version: %s, want 7@2", got)
	}
	// Pause acme and resume it, each a compare-and-set on the partition
	// version the page shows.
	consoleDo(t, second, "pause acme", chromedp.Click("#pause"), chromedp.WaitVisible("#resume"))
	if got := consoleBrowserText(t, second, "#notice"); got != "Tenant paused (partition version 3)." {
		t.Fatalf("after pause the page says %q", got)
	}
	if got := consoleBrowserText(t, second, "#paused"); got != "yes: no run of it is admitted or leased" {
		t.Fatalf("after pause the paused fact is %q", got)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=true@3" {
		t.Fatalf("acme in the database after pause: %s", got)
	}
	consoleDo(t, second, "resume acme", chromedp.Click("#resume"), chromedp.WaitVisible("#pause"))
	if got := consoleBrowserText(t, second, "#notice"); got != "Tenant resumed (partition version 4)." {
		t.Fatalf("after resume the page says %q", got)
	}
	if got := consolePaused(t, d, "acme"); got != "paused=false@4" {
		t.Fatalf("acme in the database after resume: %s", got)
	}
	// Pause the whole domain from its page and resume it, each a
	// compare-and-set on the policy version.
	version := mustAtoi(t, strings.Split(consoleDomainPaused(t, d), "@")[1])
	consoleDo(t, second, "domain page to pause", chromedp.Navigate(base+"/"), chromedp.WaitVisible("#domain-pause"))
	consoleDo(t, second, "pause the domain", chromedp.Click("#domain-pause"), chromedp.WaitVisible("#domain-resume"))
	if got, want := consoleBrowserText(t, second, "#notice"), fmt.Sprintf("Domain paused (policy version %d): no run is admitted or leased until it is resumed.", version+1); got != want {
		t.Fatalf("after the domain pause the page says %q, want %q", got, want)
	}
	if got, want := consoleDomainPaused(t, d), fmt.Sprintf("paused=true@%d", version+1); got != want {
		t.Fatalf("domain in the database after pause: %s, want %s", got, want)
	}
	consoleDo(t, second, "resume the domain", chromedp.Click("#domain-resume"), chromedp.WaitVisible("#domain-pause"))
	if got, want := consoleDomainPaused(t, d), fmt.Sprintf("paused=false@%d", version+2); got != want {
		t.Fatalf("domain in the database after resume: %s, want %s", got, want)
	}

	consoleDo(t, tab, "runs page", chromedp.Click(`nav a[href$="/runs"]`), chromedp.WaitVisible("#runs"))
	shot(tab, "runs")
	consoleDo(t, tab, "open a1", chromedp.Click(`#runs a[href$="/runs/acme/a1"]`), chromedp.WaitVisible("#action-cancel"))
	shot(tab, "run")
	consoleDo(t, tab, "cancel a1", chromedp.Click("#action-cancel"), chromedp.WaitVisible("#confirm-cancel"))
	if got := consoleBrowserText(t, tab, "#confirm-cancel"); got != "Yes, cancel run a1" {
		t.Fatalf("confirmation button %q", got)
	}
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Fatalf("a1 in the database on the confirmation page: %s", got)
	}
	shot(tab, "run-cancel")
	consoleDo(t, tab, "keep a1", chromedp.Click("#keep-run"), chromedp.WaitVisible("#action-cancel"))
	if got := consoleStatus(t, d, "a1"); got != "running" {
		t.Fatalf("a1 in the database after keeping it: %s", got)
	}
	consoleDo(t, tab, "cancel a1 again", chromedp.Click("#action-cancel"), chromedp.WaitVisible("#confirm-cancel"))
	consoleDo(t, tab, "confirm the cancel", chromedp.Click("#confirm-cancel"), chromedp.WaitVisible("#notice"))
	if got := consoleBrowserText(t, tab, "#status"); got != "cancelled" {
		t.Fatalf("a1 on the page after cancel: %q", got)
	}
	if got := consoleStatus(t, d, "a1"); got != "cancelled" {
		t.Fatalf("a1 in the database after cancel: %s", got)
	}

	// Search runs by id prefix, then by an exact id, each checked against
	// the database's byte order of the ids.
	consoleDo(t, tab, "runs page again", chromedp.Click(`nav a[href$="/runs"]`), chromedp.WaitVisible("#search-q"))
	consoleDo(t, tab, "search a", chromedp.SetValue("#search-q", "a"), chromedp.Click("#search-submit"), chromedp.WaitVisible("#search-note"))
	if got, want := consoleBrowserRunIDs(t, tab), consoleRunsStartingWith(t, d, "a"); got != "a1 a2 a3 ap" || got != want {
		t.Fatalf("search a lists %q; the database %q", got, want)
	}
	shot(tab, "runs-search")
	consoleDo(t, tab, "search a2", chromedp.SetValue("#search-q", "a2"), chromedp.Click("#search-submit"),
		chromedp.WaitVisible(`//h1[normalize-space()='Runs whose id starts with "a2"']`))
	if got, want := consoleBrowserRunIDs(t, tab), consoleRunsStartingWith(t, d, "a2"); got != "a2" || got != want {
		t.Fatalf("search a2 lists %q; the database %q", got, want)
	}
	// The queued tab in admission order (a1 is cancelled now), then newest
	// first.
	consoleDo(t, tab, "clear the search", chromedp.Click("#search-clear"), chromedp.WaitVisible("#tab-queued"))
	consoleDo(t, tab, "queued tab", chromedp.Click("#tab-queued"), chromedp.WaitVisible(`#order-admission[aria-current]`))
	if got, want := consoleBrowserRunIDs(t, tab), consoleQueuedFIFO(t, d); got != "a2 x1" || got != want {
		t.Fatalf("the queued tab lists %q; the database's admission order %q", got, want)
	}
	shot(tab, "runs-queued")
	consoleDo(t, tab, "newest first", chromedp.Click("#order-newest"), chromedp.WaitVisible(`#order-newest[aria-current]`))
	if got := consoleBrowserRunIDs(t, tab); got != "x1 a2" {
		t.Fatalf("the queued tab newest first lists %q", got)
	}

	// Pause acme: the ring shows it paused.
	consoleDo(t, tab, "acme again", chromedp.Navigate(base+"/tenants/acme"), chromedp.WaitVisible("#pause"))
	consoleDo(t, tab, "pause acme for the ring", chromedp.Click("#pause"), chromedp.WaitVisible("#resume"))
	if got := consolePaused(t, d, "acme"); got != "paused=true@5" {
		t.Fatalf("acme in the database after the second pause: %s", got)
	}
	consoleDo(t, tab, "ring page", chromedp.Click(`nav a[href$="/ring"]`), chromedp.WaitVisible("svg.ring"))
	if got := consoleBrowserText(t, tab, "#ring-size") + " " + consoleBrowserText(t, tab, "#partitions"); got != "4 6" {
		t.Fatalf("ring page counts %q", got)
	}
	acmeRow, err := chromedp.Run(tab, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#ring tbody tr")).map(tr => Array.from(tr.cells).map(td => td.textContent.trim()).join(" | ")).find(r => r.includes(" | acme | "))`))
	if err != nil || acmeRow != "1 | acme | paused | 3" {
		t.Fatalf("acme's ring row %q (%v)", acmeRow, err)
	}
	// a1's cancel left acme three unfinished runs.
	if n := testkit.QueryInt64(t, d.pool, `select unfinished_count from docket_claim_schedule where scope_key = 'acme'`); n != 3 {
		t.Fatalf("acme's unfinished count in the database: %d", n)
	}
	if got := consoleBrowserText(t, tab, "#legend"); strings.Join(strings.Fields(got), " ") != "eligible capped dormant paused parked empty cursor (last visited)" {
		t.Fatalf("ring legend %q", got)
	}
	shot(tab, "ring")

	// Pause a schedule and resume it, each a compare-and-set on the
	// version its row shows.
	consoleDo(t, tab, "schedules page", chromedp.Click(`nav a[href$="/schedules"]`), chromedp.WaitVisible("#schedules"))
	consoleDo(t, tab, "pause nightly", chromedp.Click("#pause-acme-nightly"), chromedp.WaitVisible("#notice"))
	if got := consoleBrowserText(t, tab, "#notice"); got != "Schedule paused (schedule version 2)." {
		t.Fatalf("after pause the page says %q", got)
	}
	if got := consoleSchedule(t, d, "nightly"); got != "paused@2" {
		t.Fatalf("nightly in the database after pause: %s", got)
	}
	shot(tab, "schedules")
	consoleDo(t, tab, "resume nightly", chromedp.Click("#resume-acme-nightly"), chromedp.WaitVisible(`//p[@id="notice"][normalize-space()="Schedule resumed (schedule version 3)."]`))
	if got := consoleSchedule(t, d, "nightly"); got != "running@3" {
		t.Fatalf("nightly in the database after resume: %s", got)
	}
	if got := consoleBrowserText(t, tab, "#pause-acme-nightly"); got != "Pause" {
		t.Fatalf("nightly's button after resume %q", got)
	}
	// weekly's next tick is in the past: overdue; nightly's, moved past now
	// by the resume, is not.
	if got := consoleBrowserText(t, tab, "#schedule-beta-weekly .next-tick"); got != "2026-01-04 00:00:00Z overdue" {
		t.Fatalf("weekly's next tick reads %q", got)
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_schedules where name = 'weekly' and next_tick_at < now()`); n != 1 {
		t.Fatalf("weekly overdue in the database: %d", n)
	}
	if got := consoleBrowserText(t, tab, "#schedule-acme-nightly .next-tick"); strings.Contains(got, "overdue") {
		t.Fatalf("nightly's next tick reads %q after the resume", got)
	}
	// The schedules table spans the page's width.
	full, err := chromedp.Run(tab, chromedp.Evaluate[bool](`(() => { const m = document.querySelector("main"), s = getComputedStyle(m);
		return Math.abs(document.querySelector("#schedules").getBoundingClientRect().width - (m.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight))) < 1 })()`))
	if err != nil || !full {
		t.Fatalf("the schedules table does not use the page's width (%v)", err)
	}

	// Take the ticks due at 08:30 on the first day: hourly's 08:00 tick
	// (nightly's next tick is past now since its resume); "its runs" lists
	// it.
	client := testkit.OpenClient(t, d.pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	if err := pgx.BeginFunc(testkit.Context(t), d.pool, func(tx pgx.Tx) error {
		_, err := client.TakeDueTicksTx(testkit.Context(t), tx, time.Date(2026, 1, 1, 8, 30, 0, 0, time.UTC), 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	consoleDo(t, tab, "schedules again", chromedp.Click(`nav a[href$="/schedules"]`), chromedp.WaitVisible("#schedules"))
	consoleDo(t, tab, "hourly's runs", chromedp.Click(`[id="runs-(tenantless)-hourly"]`), chromedp.WaitVisible("#search-note"))
	if got, want := consoleBrowserRunIDs(t, tab), consoleRunsStartingWith(t, d, "schedule:hourly@"); got != "schedule:hourly@2026-01-01T08:00:00Z" || got != want {
		t.Fatalf("hourly's runs: %q; the database %q", got, want)
	}

	// Remove weekly through its confirmation page, keeping it once first.
	consoleDo(t, tab, "schedules, to remove", chromedp.Click(`nav a[href$="/schedules"]`), chromedp.WaitVisible("#schedules"))
	consoleDo(t, tab, "remove weekly", chromedp.Click("#remove-beta-weekly"), chromedp.WaitVisible("#confirm-remove"))
	if got := consoleBrowserText(t, tab, "#confirm-remove"); got != "Yes, remove schedule weekly" {
		t.Fatalf("removal button %q", got)
	}
	red, err := chromedp.Run(tab, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("#confirm-remove")).backgroundColor`))
	if err != nil || red != "rgb(198, 40, 40)" {
		t.Fatalf("the removal button's background %q (%v), want the danger red", red, err)
	}
	if got := consoleSchedule(t, d, "weekly"); got != "running@1" {
		t.Fatalf("weekly in the database on the confirmation page: %s", got)
	}
	shot(tab, "schedule-remove")
	consoleDo(t, tab, "keep weekly", chromedp.Click("#keep-schedule"), chromedp.WaitVisible("#remove-beta-weekly"))
	if got := consoleSchedule(t, d, "weekly"); got != "running@1" {
		t.Fatalf("weekly in the database after keeping it: %s", got)
	}
	consoleDo(t, tab, "remove weekly again", chromedp.Click("#remove-beta-weekly"), chromedp.WaitVisible("#confirm-remove"))
	consoleDo(t, tab, "confirm the removal", chromedp.Click("#confirm-remove"), chromedp.WaitVisible("#notice"))
	if got := consoleBrowserText(t, tab, "#notice"); got != "Schedule removed (it was at version 1); the runs it inserted stay." {
		t.Fatalf("after the removal the page says %q", got)
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_schedules where name = 'weekly'`); n != 0 {
		t.Fatalf("weekly rows in the database after the removal: %d", n)
	}

	// The queues page of an all-domains console on the same database: the
	// domain's runs by phase, as the database counts them, each count
	// linking its runs.
	all := consoleAllDomainsServer(t, d.pool)
	consoleDo(t, tab, "queues page", chromedp.Navigate(all.URL+consolePrefix+"/"), chromedp.WaitVisible("#domain-list"))
	cells, err := chromedp.Run(tab, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#queue-public td[data-phase]")).map(td => td.dataset.phase + "=" + td.textContent.trim()).join(" ")`))
	if err != nil {
		t.Fatal(err)
	}
	if want := consolePhaseCounts(t, d); cells != want {
		t.Fatalf("the queues page counts %q; the database %q", cells, want)
	}
	shot(tab, "queues")
	consoleDo(t, tab, "the queued runs", chromedp.Click(`#queue-public td[data-phase="queued"] a`), chromedp.WaitVisible(`#order-admission[aria-current]`))
	if got, want := consoleBrowserRunIDs(t, tab), consoleQueuedFIFO(t, d); got != want {
		t.Fatalf("public's queued runs %q; the database's admission order %q", got, want)
	}
}

// consoleBrowserRunIDs is the run id of each row of the page's runs table,
// in order, space-separated.
func consoleBrowserRunIDs(t *testing.T, ctx context.Context) string {
	t.Helper()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("#runs tbody tr a")).map(a => a.textContent).join(" ")`))
	if err != nil {
		t.Fatalf("run ids: %v", err)
	}
	return ids
}

// consoleRunsStartingWith is the ids of the runs whose id starts with
// prefix, in byte order.
func consoleRunsStartingWith(t *testing.T, d consoleDomain, prefix string) string {
	t.Helper()
	var ids string
	if err := d.pool.QueryRow(testkit.Context(t), `select coalesce(string_agg(run_id, ' ' order by run_id collate "C"), '')
		from docket_runs where starts_with(run_id, $1)`, prefix).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// consoleQueuedFIFO is the ids of the queued runs in admission order.
func consoleQueuedFIFO(t *testing.T, d consoleDomain) string {
	t.Helper()
	var ids string
	if err := d.pool.QueryRow(testkit.Context(t), `select coalesce(string_agg(run_id, ' ' order by wake_at, id), '')
		from docket_runs r where docket_run_phase(r, now()) = 'queued'`).Scan(&ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

// consolePhaseCounts is the domain's runs by phase as "phase=n" in the
// runs page's tab order, then "all=n".
func consolePhaseCounts(t *testing.T, d consoleDomain) string {
	t.Helper()
	var out []string
	var total int64
	for _, p := range docket.RunPhases() {
		n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_runs r where docket_run_phase(r, now()) = $1`, string(p))
		total += n
		out = append(out, string(p)+"="+strconv.FormatInt(n, 10))
	}
	return strings.Join(append(out, "all="+strconv.FormatInt(total, 10)), " ")
}

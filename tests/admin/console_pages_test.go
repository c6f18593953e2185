package admin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The seeded tenants' rows of the tenants page: scope, cap, source,
// admitted (claimed/ready), queued, oldest queued (an age, as consoleAges
// writes it), debt, unfinished, failed, epoch, last grant, parked until,
// paused.
const (
	consoleRowNone = "(tenantless) | 2 | default | 0 (0/0) | 0 | — | 0 | 0 | 1 | 0 | — | — | no"
	consoleRowAcme = "acme | 2 | default | 0 (0/0) | 2 | AGE | 0 | 4 | 0 | 0 | — | — | no"
	consoleRowBeta = "beta | 1 | override | 2 (1/1) | 0 | — | 1 | 2 | 0 | 5 | 2026-01-01 02:00:00Z | — | no"
	consoleRowCalm = "calm | 2 | default | 0 (0/0) | 0 | — | 0 | 1 | 0 | 0 | — | 2031-01-02 03:04:05Z | no"
	consoleRowZeta = "zeta | 2 | default | 0 (0/0) | 0 | — | 0 | 0 | 0 | 0 | — | — | no"
	consoleRowXSS  = consoleXSS + " | 2 | default | 0 (0/0) | 1 | AGE | 0 | 1 | 0 | 0 | — | — | no"
)

// consoleAgeRe matches an age cell, a duration to the whole second.
var consoleAgeRe = regexp.MustCompile(`^(\d+h)?(\d+m)?\d+s$`)

// consoleAges writes the oldest-queued cell (the sixth) of tenants rows as
// AGE: the age moves with the clock, so TestConsoleTenantExtras checks its
// value and the other tests its presence.
func consoleAges(rows []string) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		cells := strings.Split(row, " | ")
		if len(cells) > 5 && consoleAgeRe.MatchString(cells[5]) {
			cells[5] = "AGE"
		}
		out[i] = strings.Join(cells, " | ")
	}
	return out
}

// The domain page shows the engine, walk, default cap and version, cursor,
// ring, partitions and parked counts, runs by status and 15 minutes of
// activity as a chart with labelled axes and a text alternative; its live
// fragment holds the same numbers.
func TestConsoleDomainPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	for _, path := range []string{"/", "/fragment/domain"} {
		r := c.get(path).expect(t, path, http.StatusOK)
		for id, want := range map[string]string{
			"engine": "tenant_fair", "walk": "spec walk (full ring)", "default-cap": "2", "policy-version": "1",
			"cursor": "2", "ring-size": "4", "partitions": "6", "parked": "1",
		} {
			if got := testkit.ConsoleFacts(t, r.body, id); got != want {
				t.Errorf("%s: %s = %q, want %q", path, id, got, want)
			}
		}
		testkit.ExpectRows(t, path+" statuses", testkit.ConsoleTable(t, r.body, "statuses"),
			"running | 7", "waiting | 1", "done | 1", "failed | 1", "cancelled | 0")
		// The chart's text alternative holds each minute's numbers, and no
		// table repeats them.
		desc := testkit.ConsoleFacts(t, r.body, "activity-desc")
		minutes := strings.Split(strings.TrimSuffix(desc, "."), "; ")
		if len(minutes) != 15 {
			t.Fatalf("%s: %d minutes in the chart's description, want 15: %q", path, len(minutes), desc)
		}
		seeded := 0
		for _, m := range minutes {
			want := ": claimed 0, finished 0, updated 0"
			if strings.HasPrefix(m, consoleTime(d.minute)) {
				want = ": claimed 1, finished 2, updated 10"
				seeded++
			}
			if !strings.HasSuffix(m, want) {
				t.Errorf("%s: minute %q, want it to end in %q (seeded minute %s)", path, m, want, consoleTime(d.minute))
			}
		}
		if seeded != 1 {
			t.Errorf("%s: the seeded minute %s is described %d times", path, consoleTime(d.minute), seeded)
		}
		if strings.Contains(r.body, `id="activity"`) {
			t.Errorf("%s: the activity is still repeated in a table", path)
		}
		if got := testkit.ConsoleFacts(t, r.body, "activity-title"); got != "Runs claimed, finished and updated per minute over the last 15 minutes (UTC)" {
			t.Errorf("%s: chart title %q", path, got)
		}
		// The count axis runs from 0 to 10 (the peak, 10 updates) in steps
		// of 5; the minute axis labels every other minute from the oldest.
		if got := consoleTicks(r.body, "y-tick"); got != "0 5 10" {
			t.Errorf("%s: count axis %q", path, got)
		}
		first, err := time.Parse("2006-01-02 15:04:05Z", strings.SplitN(minutes[0], ": ", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		for i := 0; i < 15; i += 2 {
			labels = append(labels, first.Add(time.Duration(i)*time.Minute).Format("15:04"))
		}
		if got := consoleTicks(r.body, "x-tick"); got != strings.Join(labels, " ") {
			t.Errorf("%s: minute axis %q, want %q", path, got, strings.Join(labels, " "))
		}
		for _, title := range []string{`class="axis-title">minute (UTC), the current one last<`, `class="axis-title" transform="rotate(-90 12 62)">runs<`} {
			if !strings.Contains(r.body, title) {
				t.Errorf("%s: the chart lacks the axis title %s", path, title)
			}
		}
		if got := testkit.ConsoleFacts(t, r.body, "ring-definition"); got != "Ring size counts the positions whose partition owns unfinished (running or waiting) runs, parked ones included; partitions counts every position, empty ones too. The ring page shows the same counts." {
			t.Errorf("%s: ring definition %q", path, got)
		}
	}
	r := c.get("/")
	for _, want := range []string{
		`<noscript><meta http-equiv="refresh" content="15"></noscript>`,
		`<script src="/ops/docket/static/refresh.js" defer></script>`,
		`data-fragment="/ops/docket/fragment/domain"`,
		"Docket keeps no claim trace table",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("domain page lacks %q", want)
		}
	}
	if strings.Contains(c.get("/fragment/domain").body, "<html") {
		t.Errorf("the fragment is a whole page")
	}
}

// consoleTicks returns the texts of the chart's axis labels of class, in
// order, separated by spaces.
func consoleTicks(body, class string) string {
	var out []string
	for _, m := range regexp.MustCompile(`class="tick `+class+`">([^<]*)<`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return strings.Join(out, " ")
}

// The tenants page lists every partition with its cap, source, counts,
// epoch, last grant and parking: in scope order by default, or by
// unfinished, queued or debt (most first, ties by scope), filtered by scope
// prefix and state, a keyset page at a time.
func TestConsoleTenantsPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	tenants := func(query string) []string {
		t.Helper()
		return consoleAges(testkit.ConsoleTable(t, c.get("/tenants"+query).expect(t, query, http.StatusOK).body, "tenants"))
	}
	testkit.ExpectRows(t, "scope order", tenants(""), consoleRowNone, consoleRowAcme, consoleRowBeta, consoleRowCalm, consoleRowZeta, consoleRowXSS)
	testkit.ExpectRows(t, "by unfinished", tenants("?sort=unfinished"), consoleRowAcme, consoleRowBeta, consoleRowCalm, consoleRowXSS, consoleRowNone, consoleRowZeta)
	testkit.ExpectRows(t, "by queued", tenants("?sort=queued"), consoleRowAcme, consoleRowXSS, consoleRowNone, consoleRowBeta, consoleRowCalm, consoleRowZeta)
	testkit.ExpectRows(t, "by debt", tenants("?sort=debt"), consoleRowBeta, consoleRowNone, consoleRowAcme, consoleRowCalm, consoleRowZeta, consoleRowXSS)
	testkit.ExpectRows(t, "capped", tenants("?state=capped"), consoleRowBeta)
	testkit.ExpectRows(t, "queued", tenants("?state=queued&sort=queued"), consoleRowAcme, consoleRowXSS)
	testkit.ExpectRows(t, "parked", tenants("?state=parked&sort=debt"), consoleRowCalm)
	testkit.ExpectRows(t, "empty", tenants("?state=empty&sort=unfinished"), consoleRowNone, consoleRowZeta)
	testkit.ExpectRows(t, "prefix z", tenants("?prefix=z"), consoleRowZeta, consoleRowXSS)
	testkit.ExpectRows(t, "prefix z, empty", tenants("?prefix=z&state=empty"), consoleRowZeta)
	testkit.ExpectRows(t, "no match", tenants("?prefix=nobody"), "No partition matches.")

	// Keyset pages of two, in scope order and by unfinished.
	for _, tc := range []struct {
		sort  string
		pages [][]string
	}{
		{"scope", [][]string{{consoleRowNone, consoleRowAcme}, {consoleRowBeta, consoleRowCalm}, {consoleRowZeta, consoleRowXSS}}},
		{"unfinished", [][]string{{consoleRowAcme, consoleRowBeta}, {consoleRowCalm, consoleRowXSS}, {consoleRowNone, consoleRowZeta}}},
		{"queued", [][]string{{consoleRowAcme, consoleRowXSS}, {consoleRowNone, consoleRowBeta}, {consoleRowCalm, consoleRowZeta}}},
	} {
		r := c.get("/tenants?limit=2&sort="+tc.sort).expect(t, tc.sort, http.StatusOK)
		for i, want := range tc.pages {
			testkit.ExpectRows(t, fmt.Sprintf("%s page %d", tc.sort, i+1), consoleAges(testkit.ConsoleTable(t, r.body, "tenants")), want...)
			next := consoleLink(r.body, "next-page")
			if i == len(tc.pages)-1 {
				if next != "" {
					t.Fatalf("%s: last page links to %q", tc.sort, next)
				}
				break
			}
			if next == "" {
				t.Fatalf("%s page %d has no next link", tc.sort, i+1)
			}
			if !strings.Contains(next, "sort="+tc.sort) || !strings.Contains(next, "limit=2") || strings.Contains(next, "offset") {
				t.Fatalf("%s page %d next link %q", tc.sort, i+1, next)
			}
			r = c.getURL(next).expect(t, next, http.StatusOK)
			if consoleLink(r.body, "first-page") == "" {
				t.Fatalf("%s page %d has no first-page link", tc.sort, i+2)
			}
		}
	}
	// The tenantless scope as the cursor, and a cursor inside the count order.
	testkit.ExpectRows(t, "after tenantless", tenants("?limit=1&after_tl=1"), consoleRowAcme)
	testkit.ExpectRows(t, "after (1, calm)", tenants("?sort=unfinished&after_v=1&after_t=calm"), consoleRowXSS, consoleRowNone, consoleRowZeta)

	for query, status := range map[string]int{
		"?sort=bogus": http.StatusBadRequest, "?state=bogus": http.StatusBadRequest,
		"?limit=0": http.StatusBadRequest, "?limit=1001": http.StatusBadRequest,
		"?after_t=a&after_v=x": http.StatusBadRequest, "?after_t=a&after_v=-1": http.StatusBadRequest,
	} {
		r := c.get("/tenants"+query).expect(t, query, status)
		if !strings.Contains(r.body, `class="message error"`) {
			t.Errorf("%s: no error message on the page:\n%s", query, r.body)
		}
	}
}

// A tenant page shows the scope's counts and newest runs; the tenantless
// scope has its own path; a read-only console renders no form.
func TestConsoleTenantPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/tenants/beta").expect(t, "beta", http.StatusOK)
	for id, want := range map[string]string{
		"scope": "beta", "cap": "1", "source": "override", "partition-version": "1",
		"admitted": "2 (claimed 1, ready 1)", "queued": "0", "debt": "1", "unfinished": "2",
		"epoch": "5", "ring-position": "2", "parked": "no", "last-grant": "2026-01-01 02:00:00Z",
	} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("beta: %s = %q, want %q", id, got, want)
		}
	}
	at := consoleTime(d.at)
	testkit.ExpectRows(t, "beta runs", testkit.ConsoleTable(t, r.body, "runs"),
		"b3 | beta | send | done | done | 0 | — | — | — | 0 | 2026-01-01 00:06:00Z | "+at,
		"b2 | beta | bill | running | ready | 0 | — | — | — | 0 | 2026-01-01 00:05:00Z | "+at,
		"b1 | beta | send | running | executing | 0 | — | — | "+at+" | 0 | 2026-01-01 00:04:00Z | "+at)
	if strings.Contains(r.body, "<form method=\"post\"") || strings.Contains(r.body, "csrf_token") {
		t.Errorf("a read-only console renders a write form:\n%s", r.body)
	}
	if got := consoleLink(r.body, "all-runs"); got != consolePrefix+"/runs?tenant=beta" {
		t.Errorf("all-runs link %q", got)
	}

	r = c.get("/tenants/calm").expect(t, "calm", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "parked"); got != "until 2031-01-02 03:04:05Z" {
		t.Errorf("calm parked = %q", got)
	}
	r = c.get("/tenantless").expect(t, "tenantless", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "scope"); got != "(tenantless)" {
		t.Errorf("tenantless scope = %q", got)
	}
	testkit.ExpectRows(t, "tenantless runs", testkit.ConsoleTable(t, r.body, "runs"), "n1 | (tenantless) | send | failed | failed | 0 | — | — | — | 0 | 2026-01-01 00:07:00Z | "+at)
	if got := consoleLink(r.body, "all-runs"); got != consolePrefix+"/runs?tenantless=1" {
		t.Errorf("tenantless all-runs link %q", got)
	}

	// A scope without a partition reads as version 0 with no position.
	r = c.get("/tenants/nobody").expect(t, "nobody", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "ring-position"); got != "none (no partition)" {
		t.Errorf("nobody ring position = %q", got)
	}
	testkit.ExpectRows(t, "nobody runs", testkit.ConsoleTable(t, r.body, "runs"), "No runs.")
}

// The ring page draws a window of positions centred on the cursor (wrapping
// around the ring's end) with the cursor marked at the top of the circle and
// each position coloured by its state, with a legend; it states the ring's
// counts with the domain page's definition, and pages through larger rings.
func TestConsoleRingPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/ring").expect(t, "ring", http.StatusOK)
	pos := map[int64]string{
		1: "1 | acme | eligible | 4",
		2: "2 ◀ cursor | beta | eligible | 2",
		3: "3 | (tenantless) | empty | 0",
		4: "4 | " + consoleXSS + " | eligible | 1",
		5: "5 | calm | parked | 1",
		6: "6 | zeta | empty | 0",
	}
	// The whole ring fits the default window: the cursor (2) is in its
	// middle, after the last position and the first.
	testkit.ExpectRows(t, "ring", testkit.ConsoleTable(t, r.body, "ring"), pos[6], pos[1], pos[2], pos[3], pos[4], pos[5])
	if n := strings.Count(r.body, `class="dot `); n != 6 {
		t.Errorf("%d dots, want 6", n)
	}
	for _, want := range []string{`<circle cx="170.0" cy="30.0" r="11" class="dot eligible cursor"/>`, `class="dot parked"`, `class="dot empty"`,
		`<span class="swatch capped"></span> capped`, `<span class="swatch dormant"></span> dormant`,
		`<text x="170" y="155" class="centre">ring size 4</text>`, `<text x="170" y="175" class="centre">6 of 6 positions shown</text>`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("ring page lacks %q", want)
		}
	}
	// The ring page's counts are the domain page's, and the database's.
	domain := c.get("/").expect(t, "domain", http.StatusOK).body
	for id, want := range map[string]string{"cursor": "2", "ring-size": "4", "partitions": "6", "empty": "2", "parked": "1", "shown": "6 of 6 positions"} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("ring page %s = %q, want %q", id, got, want)
		}
		if id == "ring-size" || id == "partitions" || id == "parked" {
			if got := testkit.ConsoleFacts(t, domain, id); got != want {
				t.Errorf("domain page %s = %q, the ring page %q", id, got, want)
			}
		}
	}
	if n := testkit.QueryInt64(t, d.pool, `select count(*) from docket_claim_schedule where unfinished_count > 0`); n != 4 {
		t.Errorf("ring size in the database: %d", n)
	}
	if got := testkit.ConsoleFacts(t, r.body, "ring-definition"); !strings.HasPrefix(got, "Ring size counts the positions whose partition owns unfinished (running or waiting) runs, parked ones included: the same count as the domain page's.") {
		t.Errorf("ring definition %q", got)
	}
	if consoleLink(r.body, "prev-page") != "" || consoleLink(r.body, "next-page") != "" {
		t.Errorf("a window holding the whole ring links to others")
	}

	// Windows of three and five are centred on the cursor too; five wraps
	// to the ring's last position.
	r = c.get("/ring?limit=3").expect(t, "ring window of 3", http.StatusOK)
	testkit.ExpectRows(t, "3 around the cursor", testkit.ConsoleTable(t, r.body, "ring"), pos[1], pos[2], pos[3])
	if got := testkit.ConsoleFacts(t, r.body, "shown"); got != "3 of 6 positions" {
		t.Errorf("shown = %q", got)
	}
	r = c.get("/ring?limit=5").expect(t, "ring window of 5", http.StatusOK)
	testkit.ExpectRows(t, "5 around the cursor", testkit.ConsoleTable(t, r.body, "ring"), pos[6], pos[1], pos[2], pos[3], pos[4])
	if got := consoleLink(r.body, "next-page"); got != consolePrefix+"/ring?from=5&limit=5" {
		t.Errorf("next link of the wrapped window %q", got)
	}

	// Windows of two: the cursor first (an even window has it left of its
	// middle), then paged.
	r = c.get("/ring?limit=2").expect(t, "ring window", http.StatusOK)
	testkit.ExpectRows(t, "around the cursor", testkit.ConsoleTable(t, r.body, "ring"), pos[2], pos[3])
	if got := consoleLink(r.body, "prev-page"); got != consolePrefix+"/ring?from=1&limit=2" {
		t.Fatalf("prev link %q", got)
	}
	next := consoleLink(r.body, "next-page")
	if next != consolePrefix+"/ring?from=4&limit=2" {
		t.Fatalf("next link %q", next)
	}
	r = c.getURL(next).expect(t, next, http.StatusOK)
	testkit.ExpectRows(t, "from 4", testkit.ConsoleTable(t, r.body, "ring"), pos[4], pos[5])
	if !strings.Contains(r.body, "The cursor's position is not in this window.") {
		t.Errorf("a window without the cursor does not say so")
	}
	if got := consoleLink(r.body, "cursor-page"); got != consolePrefix+"/ring?limit=2" {
		t.Errorf("cursor link %q", got)
	}
	r = c.get("/ring?from=6&limit=2").expect(t, "last window", http.StatusOK)
	testkit.ExpectRows(t, "from 6", testkit.ConsoleTable(t, r.body, "ring"), "6 | zeta | empty | 0")
	if consoleLink(r.body, "next-page") != "" {
		t.Errorf("the last window links further")
	}

	// With the cursor on the last position the window continues from the
	// first.
	testkit.ExecSQL(t, d.pool, `update docket_claim_policy set scan_ring_position = 6`)
	r = c.get("/ring?limit=3").expect(t, "cursor at the end", http.StatusOK)
	testkit.ExpectRows(t, "3 around the last position", testkit.ConsoleTable(t, r.body, "ring"),
		"5 | calm | parked | 1", "6 ◀ cursor | zeta | empty | 0", "1 | acme | eligible | 4")
	c.get("/ring?from=0").expect(t, "from 0", http.StatusBadRequest)
	c.get("/ring?from=x").expect(t, "from x", http.StatusBadRequest)
}

// The runs page lists runs newest first, of every scope or one, filtered by
// status, graph and start time, a keyset page at a time, with each run's
// phase, attempt, next wake (c1, scheduled), last error and claim (b1,
// executing).
func TestConsoleRunsPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	at := consoleTime(d.at)
	var c1Wake time.Time
	if err := d.pool.QueryRow(testkit.Context(t), `select wake_at from docket_runs where run_id = 'c1'`).Scan(&c1Wake); err != nil {
		t.Fatal(err)
	}
	row := func(id, scope, graph, status, phase, wake, claimed string, minute int) string {
		return fmt.Sprintf("%s | %s | %s | %s | %s | 0 | %s | — | %s | 0 | 2026-01-01 00:%02d:00Z | %s", id, scope, graph, status, phase, wake, claimed, minute, at)
	}
	ap := row("ap", "acme", "send", "running", "poisoned", "—", "—", 10)
	c1 := row("c1", "calm", "send", "running", "scheduled", consoleTime(c1Wake), "—", 9)
	x1 := row("x1", consoleXSS, "send", "running", "queued", "—", "—", 8)
	n1 := row("n1", "(tenantless)", "send", "failed", "failed", "—", "—", 7)
	b3 := row("b3", "beta", "send", "done", "done", "—", "—", 6)
	b2 := row("b2", "beta", "bill", "running", "ready", "—", "—", 5)
	b1 := row("b1", "beta", "send", "running", "executing", "—", at, 4)
	a3 := row("a3", "acme", "bill", "waiting", "waiting", "—", "—", 3)
	a2 := row("a2", "acme", "send", "running", "queued", "—", "—", 2)
	a1 := row("a1", "acme", "send", "running", "queued", "—", "—", 1)
	runs := func(query string) (rows []string, next string) {
		t.Helper()
		r := c.get("/runs"+query).expect(t, query, http.StatusOK)
		return testkit.ConsoleTable(t, r.body, "runs"), consoleLink(r.body, "next-page")
	}
	got, next := runs("")
	testkit.ExpectRows(t, "all", got, ap, c1, x1, n1, b3, b2, b1, a3, a2, a1)
	if next != "" {
		t.Errorf("one page links further: %q", next)
	}
	// Three keyset pages of four.
	got, next = runs("?limit=4")
	testkit.ExpectRows(t, "page 1", got, ap, c1, x1, n1)
	r := c.getURL(next).expect(t, next, http.StatusOK)
	testkit.ExpectRows(t, "page 2", testkit.ConsoleTable(t, r.body, "runs"), b3, b2, b1, a3)
	next = consoleLink(r.body, "next-page")
	r = c.getURL(next).expect(t, next, http.StatusOK)
	testkit.ExpectRows(t, "page 3", testkit.ConsoleTable(t, r.body, "runs"), a2, a1)
	if consoleLink(r.body, "next-page") != "" {
		t.Errorf("the last page links further")
	}

	got, _ = runs("?status=running&graph=send")
	testkit.ExpectRows(t, "running send", got, ap, c1, x1, b1, a2, a1)
	got, _ = runs("?tenant=acme")
	testkit.ExpectRows(t, "acme", got, ap, a3, a2, a1)
	got, next = runs("?tenant=acme&limit=2&status=running")
	testkit.ExpectRows(t, "acme running page 1", got, ap, a2)
	r = c.getURL(next).expect(t, next, http.StatusOK)
	testkit.ExpectRows(t, "acme running page 2", testkit.ConsoleTable(t, r.body, "runs"), a1)
	got, _ = runs("?tenantless=1")
	testkit.ExpectRows(t, "tenantless", got, n1)
	got, _ = runs("?from=2026-01-01T00:03:00Z&to=2026-01-01T00:07:00Z")
	testkit.ExpectRows(t, "started in [00:03, 00:07)", got, b3, b2, b1, a3)
	got, next = runs("?from=2026-01-01T00:03:00Z&to=2026-01-01T00:07:00Z&limit=3")
	testkit.ExpectRows(t, "range page 1", got, b3, b2, b1)
	r = c.getURL(next).expect(t, next, http.StatusOK)
	testkit.ExpectRows(t, "range page 2", testkit.ConsoleTable(t, r.body, "runs"), a3)
	if consoleLink(r.body, "next-page") != "" {
		t.Errorf("a page ending at the range's start links further")
	}
	got, _ = runs("?status=cancelled")
	testkit.ExpectRows(t, "cancelled", got, "No runs.")

	for query, status := range map[string]int{
		"?status=bogus": http.StatusBadRequest, "?from=yesterday": http.StatusBadRequest,
		"?after_run=a1&after_started=x": http.StatusBadRequest, "?limit=-1": http.StatusBadRequest,
	} {
		c.get("/runs"+query).expect(t, query, status)
	}
}

// A run page shows the pretty-printed state, step, checkpoint, attempts,
// claim (never its token), poison and admission state.
func TestConsoleRunPage(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/runs/beta/b1").expect(t, "b1", http.StatusOK)
	for id, want := range map[string]string{
		"run-id": "b1", "scope": "beta", "graph": "send (hash h1)", "status": "running", "step": "0",
		"checkpoint-seq": "0", "attempts": "0", "abandons": "0", "claim": "held since " + consoleTime(d.at),
		"poison": "—", "admission": "admitted-claimed since 2026-01-01 01:00:00Z",
	} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("b1: %s = %q, want %q", id, got, want)
		}
	}
	if got := testkit.ConsoleFacts(t, r.body, "state"); got != `{ "n": [ 1, 2 ], "run": "b1" }` {
		t.Errorf("state = %q", got)
	}
	if !strings.Contains(r.body, "{\n  &#34;n&#34;: [\n    1,\n    2\n  ],\n  &#34;run&#34;: &#34;b1&#34;\n}") {
		t.Errorf("state is not indented:\n%s", r.body)
	}
	var token string
	if err := d.pool.QueryRow(testkit.Context(t), `select claim_token::text from docket_runs where run_id = 'b1'`).Scan(&token); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.body, token) {
		t.Fatalf("the run page shows the claim token")
	}
	r = c.get("/runs/acme/ap").expect(t, "ap", http.StatusOK)
	for id, want := range map[string]string{
		"attempts": "5", "claim": "not held", "poison": "max_claim_attempts_exceeded at " + consoleTime(d.at),
		"admission": "inactive", "status": "running",
	} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("ap: %s = %q, want %q", id, got, want)
		}
	}
	if got := testkit.ConsoleFacts(t, r.body, "errors"); got != "No handler errors recorded." {
		t.Errorf("ap errors = %q", got)
	}
	// The error history, newest last, escaped like every other cell.
	testkit.ExecSQL(t, d.pool, `update docket_runs set attempt = 2, errors = '[
		{"attempt": 1, "at": "2026-01-01T01:00:00Z", "kind": "error", "error": "card <declined>"},
		{"attempt": 2, "at": "2026-01-01T01:05:00Z", "kind": "panic", "error": "docket: handler panic: boom"}]'
		where run_id = 'n1'`)
	r = c.get("/tenantless/runs/n1").expect(t, "n1", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "status"); got != "failed" {
		t.Errorf("n1 status = %q", got)
	}
	if got := testkit.ConsoleFacts(t, r.body, "handler-attempts"); got != "2" {
		t.Errorf("n1 handler attempts = %q", got)
	}
	testkit.ExpectRows(t, "n1 errors", testkit.ConsoleTable(t, r.body, "errors"),
		"1 | 2026-01-01 01:00:00Z | error | card <declined>",
		"2 | 2026-01-01 01:05:00Z | panic | docket: handler panic: boom")
	if !strings.Contains(r.body, "card &lt;declined&gt;") {
		t.Errorf("the error text is not escaped:\n%s", r.body)
	}
	c.get("/runs/acme/b1").expect(t, "b1 under acme", http.StatusNotFound)
	c.get("/runs/acme/missing").expect(t, "missing run", http.StatusNotFound)
	c.get("/tenantless/runs/a1").expect(t, "a1 as tenantless", http.StatusNotFound)
}

// Unknown paths are 404 pages, a wrong method 405, the assets are served,
// and the bare prefix redirects to the domain page.
func TestConsoleRouting(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, false, nil))
	r := c.get("/nowhere").expect(t, "nowhere", http.StatusNotFound)
	if !strings.Contains(r.body, "No such page.") {
		t.Errorf("404 page:\n%s", r.body)
	}
	c.post("/tenants", nil).expect(t, "POST tenants", http.StatusMethodNotAllowed)
	r = c.get("/static/style.css").expect(t, "css", http.StatusOK)
	if !strings.Contains(r.body, ".dot.eligible") {
		t.Errorf("style sheet:\n%s", r.body)
	}
	c.get("/static/refresh.js").expect(t, "js", http.StatusOK)
	// Mounted as it is (not under the app mux's subtree pattern, which
	// redirects by itself), the handler sends the bare prefix to the domain
	// page and refuses paths outside the prefix.
	h, err := console.New(testkit.Context(t), console.Config{Pool: d.pool, Prefix: consolePrefix})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, consolePrefix, nil))
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != consolePrefix+"/" {
		t.Errorf("bare prefix: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/elsewhere/tenants", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("outside the prefix: %d", rec.Code)
	}
	for _, path := range []string{"/", "/tenants", "/ring", "/runs", "/tenants/acme", "/runs/acme/a1"} {
		body := c.get(path).expect(t, path, http.StatusOK).body
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s links outside the console", path)
		}
	}
}

// Every id reaches the pages escaped: the XSS tenant's name never appears
// as markup, and its links carry it path-escaped.
func TestConsoleEscaping(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	escapedPath := "/tenants/zz%3Cscript%3Ealert%281%29%3C%2Fscript%3E"
	for _, path := range []string{"/tenants", "/ring", "/runs", escapedPath, "/runs/zz%3Cscript%3Ealert%281%29%3C%2Fscript%3E/x1", "/runs?tenant=" + strings.ReplaceAll(escapedPath[len("/tenants/"):], "%2F", "/")} {
		r := c.get(path).expect(t, path, http.StatusOK)
		if strings.Contains(r.body, "<script>alert") {
			t.Errorf("%s renders the tenant id as markup", path)
		}
		if !strings.Contains(r.body, "zz&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("%s does not show the escaped id:\n%s", path, r.body)
		}
	}
	r := c.get(escapedPath)
	if got := testkit.ConsoleFacts(t, r.body, "scope"); got != consoleXSS {
		t.Errorf("XSS tenant page scope = %q", got)
	}
	if !strings.Contains(r.body, `action="/ops/docket/tenants/zz%3Cscript%3Ealert%281%29%3C%2Fscript%3E/cap"`) {
		t.Errorf("the cap form's action is not path-escaped:\n%s", r.body)
	}
}

// A Legacy domain whose policy was never initialized has no caps: its pages
// say so instead of failing.
func TestConsoleLegacyDomain(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, testkit.LegacyConfig())
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		values ('l1', 'acme', 'g', 'h', '{}', 'running', now()), ('l2', null, 'g', 'h', '{}', 'waiting', null)`)
	c := newConsoleClient(t, consoleServer(t, pool, false, nil))
	r := c.get("/").expect(t, "domain", http.StatusOK)
	for id, want := range map[string]string{"engine": "legacy", "walk": "— (Legacy: no ring walk)", "default-cap": "not initialized", "policy-version": "0", "ring-size": "2"} {
		if got := testkit.ConsoleFacts(t, r.body, id); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	r = c.get("/tenants").expect(t, "tenants", http.StatusOK)
	testkit.ExpectRows(t, "tenants", consoleAges(testkit.ConsoleTable(t, r.body, "tenants")),
		"(tenantless) | — | none | 0 (0/0) | 0 | — | 0 | 1 | 0 | 0 | — | — | no",
		"acme | — | none | 0 (0/0) | 1 | AGE | 0 | 1 | 0 | 0 | — | — | no")
	r = c.get("/tenants/acme").expect(t, "acme", http.StatusOK)
	if got := testkit.ConsoleFacts(t, r.body, "cap") + "; " + testkit.ConsoleFacts(t, r.body, "source"); got != "none; no override and no initialized default" {
		t.Errorf("acme cap: %q", got)
	}
	r = c.get("/ring").expect(t, "ring", http.StatusOK)
	// One statement creates its partitions in scope key order. The cursor
	// stands at 0, before the first position, so the window centred on it
	// starts on the last position, which precedes the first on the circle.
	testkit.ExpectRows(t, "ring", testkit.ConsoleTable(t, r.body, "ring"), "2 | acme | eligible | 1", "1 | (tenantless) | dormant | 1")
}

package admin

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// No console page names a schema version: the notes about the claim trace
// hold for every schema the binary runs on.
func TestConsoleNamesNoSchemaVersion(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	c := newConsoleClient(t, consoleServer(t, d.pool, true, nil))
	for _, path := range []string{"/", "/fragment/domain", "/tenants", "/tenants/acme", "/tenantless", "/ring", "/runs", "/runs/acme/a1", "/tenantless/runs/n1", "/runs/acme/a1/cancel", "/schedules"} {
		r := c.get(path).expect(t, path, http.StatusOK)
		if m := hardCodedVersion.FindString(testkit.ConsoleText(r.body)); m != "" {
			t.Errorf("%s names the schema version %q", path, m)
		}
	}
	if got, want := consoleParagraph(t, c.get("/").body, "activity-note"),
		"Counted from docket_runs, which keeps only each run's latest times: claimed = claims still held, by claimed_at; "+
			"finished = runs finished, by finished_at; updated = runs whose latest write (claim, commit, signal) fell in the minute, "+
			"by updated_at. Docket keeps no claim trace table, so earlier claims of a run are not counted."; got != want {
		t.Errorf("domain page note:\n%q\nwant\n%q", got, want)
	}
	if got, want := consoleParagraph(t, c.get("/ring").body, "visits"),
		"Docket keeps no claim trace table, so no visits are recorded in the database; "+
			"a trusted caller sees each call's visits through TraceClaimDue."; got != want {
		t.Errorf("ring page note:\n%q\nwant\n%q", got, want)
	}
}

// A failed database call is logged with its SQLSTATE and the SQLSTATE's
// class, never with the message text, which can hold ids.
func TestConsoleLogsSQLState(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	var logs bytes.Buffer
	h, err := console.New(testkit.Context(t), console.Config{Pool: d.pool, Prefix: consolePrefix,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	testkit.ExecSQL(t, d.pool, `alter table docket_claim_schedule rename to docket_claim_schedule_gone`)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, consolePrefix+"/tenants/acme", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("tenant page on a broken schema: status %d\n%s", rec.Code, rec.Body.String())
	}
	if got, want := testkit.ConsoleFacts(t, rec.Body.String(), "error"), "The database call failed; the server log has its error class."; got != want {
		t.Errorf("error page says %q, want %q", got, want)
	}
	line := strings.TrimSpace(logs.String())
	if _, after, ok := strings.Cut(line, " msg="); !ok || after != `"console: request refused" route=tenant status=500 class=42 sqlstate=42P01` {
		t.Errorf("log line %q, want msg=\"console: request refused\" route=tenant status=500 class=42 sqlstate=42P01", line)
	}
	for _, leak := range []string{"acme", "docket_claim_schedule", "does not exist"} {
		if strings.Contains(line, leak) {
			t.Errorf("log line holds %q: %s", leak, line)
		}
	}
}

// consoleParagraph returns the text of the paragraph with id, markup and
// all.
func consoleParagraph(t *testing.T, body, id string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `id="`+id+`">`)
	text, _, closed := strings.Cut(rest, "</p>")
	if !ok || !closed {
		t.Fatalf("no paragraph %q in:\n%s", id, body)
	}
	return testkit.ConsoleText(text)
}

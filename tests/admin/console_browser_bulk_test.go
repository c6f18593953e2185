package admin

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// A real browser switches the runs page to the queued tab (in admission
// order, oldest first), ticks two runs,
// cancels them through the confirmation and sees each result, with the
// database checked before and after the confirmation.
func TestConsoleBrowserBulkCancel(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, true, nil)
	tab := consoleBrowser(t)
	shot := consoleShots(t)

	consoleDo(t, tab, "runs page", chromedp.Navigate(srv.URL+consolePrefix+"/runs"), chromedp.WaitVisible("#phase-tabs"))
	if got := consoleBrowserText(t, tab, "#tab-queued"); got != "queued 3" {
		t.Fatalf("queued tab %q", got)
	}
	consoleDo(t, tab, "queued tab", chromedp.Click("#tab-queued"), chromedp.WaitVisible(`#tab-queued[aria-current]`))
	if got := consoleBrowserText(t, tab, "#runs tbody tr:first-child td:nth-child(2)") + " " +
		consoleBrowserText(t, tab, "#runs tbody tr:last-child td:nth-child(2)"); got != "a1 x1" {
		t.Fatalf("the queued tab lists %q first and last", got)
	}
	consoleDo(t, tab, "select a1 and a2", chromedp.Click("#select-a1"), chromedp.Click("#select-a2"))
	shot(tab, "runs-bulk")
	consoleDo(t, tab, "bulk cancel", chromedp.Click("#bulk-cancel"), chromedp.WaitVisible("#bulk-apply"))
	if got := consoleBrowserText(t, tab, "#bulk-runs"); got != "a1 (acme)\na2 (acme)" {
		t.Fatalf("the confirmation lists %q", got)
	}
	if got := consoleStatus(t, d, "a1") + " " + consoleStatus(t, d, "a2"); got != "running running" {
		t.Fatalf("after the confirmation page: %s", got)
	}
	shot(tab, "runs-bulk-confirm")
	consoleDo(t, tab, "apply", chromedp.Click("#bulk-apply"), chromedp.WaitVisible("#bulk-results"))
	if got := consoleBrowserText(t, tab, "#bulk-results tbody"); got != "a1\tacme\tdone\na2\tacme\tdone" {
		t.Fatalf("results %q", got)
	}
	for run, want := range map[string]string{"a1": "cancelled", "a2": "cancelled", "x1": "running"} {
		if got := consoleStatus(t, d, run); got != want {
			t.Errorf("%s after the bulk cancel: %s, want %s", run, got, want)
		}
	}
	shot(tab, "runs-bulk-result")
}

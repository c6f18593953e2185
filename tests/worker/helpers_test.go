package worker

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// waitClosed waits for ch to be closed, failing the test after testkit.WorkerDeadline.
func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// expectNoIdentities fails for every record at info level or above that
// carries one of identities as an attribute value or inside its message.
func expectNoIdentities(t *testing.T, r *testkit.WorkerLogRecorder, identities ...string) {
	t.Helper()
	for _, rec := range r.All() {
		if rec.Level < slog.LevelInfo {
			continue
		}
		for _, id := range identities {
			if strings.Contains(rec.Message, id) {
				t.Errorf("%s record %q names %q", rec.Level, rec.Message, id)
			}
			for key, value := range rec.Attrs {
				if strings.Contains(value, id) {
					t.Errorf("%s record %q names %q in %s", rec.Level, rec.Message, id, key)
				}
			}
		}
	}
}

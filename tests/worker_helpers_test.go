package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// wkDeadline is how long a worker test waits for an event before failing.
// It is generous on purpose: it bounds a hang, it asserts no latency.
const wkDeadline = 20 * time.Second

// wkStartWorker builds a worker of client with cfg and runs it until the
// test ends; the returned channel yields Run's result.
func wkStartWorker(t *testing.T, client *docket.Client, cfg docket.WorkerConfig) (*docket.Worker, <-chan error) {
	t.Helper()
	w, err := docket.NewWorker(client, cfg)
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), wkDeadline)
		defer stop()
		_ = w.Stop(stopCtx)
		cancel()
	})
	return w, done
}

// wkStop stops w within wkDeadline and fails the test on a stop error.
func wkStop(t *testing.T, w *docket.Worker, runResult <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wkDeadline)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// wkWaitClosed waits for ch to be closed, failing the test after wkDeadline.
func wkWaitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wkDeadline):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// wkInsertRuns inserts n due runs for each tenant, named <tenant>-<i>, in
// one batch, tenant by tenant.
func wkInsertRuns(t *testing.T, client *docket.Client, n int, tenants ...string) []string {
	t.Helper()
	var runs []docket.NewRun
	for _, tenant := range tenants {
		for i := range n {
			runs = append(runs, docket.NewRun{
				RunID: fmt.Sprintf("%s-%03d", tenant, i), Scope: docket.Tenant(tenant),
				GraphID: "graph", GraphHash: "v1", State: json.RawMessage(`{"n":0}`),
			})
		}
	}
	ids, err := client.InsertRuns(testContext(t), runs)
	if err != nil {
		t.Fatalf("insert runs: %v", err)
	}
	return ids
}

// wkCounter counts handler invocations per run id.
type wkCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func newWkCounter() *wkCounter { return &wkCounter{counts: map[string]int{}} }

// add counts one invocation of runID and returns its count so far.
func (c *wkCounter) add(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[runID]++
	return c.counts[runID]
}

// get returns the invocations of runID.
func (c *wkCounter) get(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[runID]
}

// expectEach fails unless every id was invoked exactly want times and no
// other run was invoked.
func (c *wkCounter) expectEach(t *testing.T, ids []string, want int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.counts) != len(ids) {
		t.Errorf("handler saw %d distinct runs, want %d", len(c.counts), len(ids))
	}
	for _, id := range ids {
		if got := c.counts[id]; got != want {
			t.Errorf("run %s: %d handler invocations, want %d", id, got, want)
		}
	}
}

// wkLogRecorder is a slog handler that keeps every record's message and
// attributes, so tests can wait for what a worker reported.
type wkLogRecorder struct {
	mu      sync.Mutex
	records []wkLogRecord
}

// wkLogRecord is one recorded log record.
type wkLogRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Enabled implements slog.Handler: everything is recorded.
func (r *wkLogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (r *wkLogRecorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, wkLogRecord{Level: rec.Level, Message: rec.Message, Attrs: attrs})
	return nil
}

// WithAttrs implements slog.Handler; the worker adds no logger attributes.
func (r *wkLogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler.
func (r *wkLogRecorder) WithGroup(string) slog.Handler { return r }

// find returns the records whose message is msg.
func (r *wkLogRecorder) find(msg string) []wkLogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []wkLogRecord
	for _, rec := range r.records {
		if rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}

// all returns every record so far.
func (r *wkLogRecorder) all() []wkLogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wkLogRecord(nil), r.records...)
}

// wkExpectQuiet fails for every record at warn level or above, except those
// whose message is in expected.
func wkExpectQuiet(t *testing.T, r *wkLogRecorder, expected ...string) {
	t.Helper()
	for _, rec := range r.all() {
		if rec.Level >= slog.LevelWarn && !slices.Contains(expected, rec.Message) {
			t.Errorf("unexpected %s record %q %v", rec.Level, rec.Message, rec.Attrs)
		}
	}
}

// wkExpectNoIdentities fails for every record at info level or above that
// carries one of identities as an attribute value or inside its message.
func wkExpectNoIdentities(t *testing.T, r *wkLogRecorder, identities ...string) {
	t.Helper()
	for _, rec := range r.all() {
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

package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// WorkerDeadline is how long a worker test waits for an event before failing.
// It is generous on purpose: it bounds a hang, it asserts no latency.
const WorkerDeadline = 20 * time.Second

// StartWorker builds a worker of client with cfg and runs it until the
// test ends; the returned channel yields Run's result.
func StartWorker(t *testing.T, client *docket.Client, cfg docket.WorkerConfig) (*docket.Worker, <-chan error) {
	t.Helper()
	return StartTestWorker(t, client, cfg, docket.WorkerTestConfig{})
}

// StartTestWorker is StartWorker of a worker with test's hooks
// (docket.NewTestWorker).
func StartTestWorker(t *testing.T, client *docket.Client, cfg docket.WorkerConfig, test docket.WorkerTestConfig) (*docket.Worker, <-chan error) {
	t.Helper()
	w, err := docket.NewTestWorker(client, cfg, test)
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		stopCtx, stop := context.WithTimeout(context.Background(), WorkerDeadline)
		defer stop()
		_ = w.Stop(stopCtx)
		cancel()
	})
	return w, done
}

// StopWorker stops w within WorkerDeadline and fails the test on a stop error.
func StopWorker(t *testing.T, w *docket.Worker, runResult <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WorkerDeadline)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// WorkerInsertRuns inserts n due runs for each tenant, named <tenant>-<i>, in
// one batch, tenant by tenant.
func WorkerInsertRuns(t *testing.T, client *docket.Client, n int, tenants ...string) []string {
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
	ids, err := client.InsertRuns(Context(t), runs)
	if err != nil {
		t.Fatalf("insert runs: %v", err)
	}
	return ids
}

// WorkerCounter counts handler invocations per run id.
type WorkerCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// NewWorkerCounter returns a WorkerCounter with every count at zero.
func NewWorkerCounter() *WorkerCounter { return &WorkerCounter{counts: map[string]int{}} }

// add counts one invocation of runID and returns its count so far.
func (c *WorkerCounter) Add(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[runID]++
	return c.counts[runID]
}

// get returns the invocations of runID.
func (c *WorkerCounter) Get(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[runID]
}

// expectEach fails unless every id was invoked exactly want times and no
// other run was invoked.
func (c *WorkerCounter) ExpectEach(t *testing.T, ids []string, want int) {
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

// WorkerLogRecorder is a slog handler that keeps every record's message and
// attributes, so tests can wait for what a worker reported.
type WorkerLogRecorder struct {
	mu      sync.Mutex
	records []WorkerLogRecord
}

// WorkerLogRecord is one recorded log record.
type WorkerLogRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// Enabled implements slog.Handler: everything is recorded.
func (r *WorkerLogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (r *WorkerLogRecorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, WorkerLogRecord{Level: rec.Level, Message: rec.Message, Attrs: attrs})
	return nil
}

// WithAttrs implements slog.Handler; the worker adds no logger attributes.
func (r *WorkerLogRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup implements slog.Handler.
func (r *WorkerLogRecorder) WithGroup(string) slog.Handler { return r }

// find returns the records whose message is msg.
func (r *WorkerLogRecorder) Find(msg string) []WorkerLogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []WorkerLogRecord
	for _, rec := range r.records {
		if rec.Message == msg {
			out = append(out, rec)
		}
	}
	return out
}

// all returns every record so far.
func (r *WorkerLogRecorder) All() []WorkerLogRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]WorkerLogRecord(nil), r.records...)
}

// WorkerExpectQuiet fails for every record at warn level or above, except those
// whose message is in expected.
func WorkerExpectQuiet(t *testing.T, r *WorkerLogRecorder, expected ...string) {
	t.Helper()
	for _, rec := range r.All() {
		if rec.Level >= slog.LevelWarn && !slices.Contains(expected, rec.Message) {
			t.Errorf("unexpected %s record %q %v", rec.Level, rec.Message, rec.Attrs)
		}
	}
}

// WorkerPool opens a pool of size connections on databaseURL, closed when the
// test ends. A worker needs room for its LISTEN session, its claims and one
// refresh or commit per handled run.
func WorkerPool(t *testing.T, databaseURL string, size int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = size
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// StartIdleWorker starts a worker with an hour-long poll on a domain with
// nothing due and returns once it is idle: it listened, and it made both of
// its start-up claim calls (the first at start, the second when LISTEN took
// effect), so from then on only a notification makes it claim again. Its
// handler sends each run id to ran and completes the run.
func StartIdleWorker(t *testing.T, client *docket.Client, ran chan<- string) (*docket.Worker, <-chan error) {
	t.Helper()
	events := NewWorkerEvents()
	w, runResult := StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, PollInterval: time.Hour, OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			ran <- job.RunID
			return docket.Complete(nil)
		}})
	events.WaitFor(t, "the worker idle after start-up", func(evs []docket.WorkerEvent) bool {
		claims := WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventClaimed && ev.Leases == 0 && ev.Poisoned == 0 && ev.Err == nil
		})
		return WorkerListening(evs) && claims == 2
	})
	return w, runResult
}

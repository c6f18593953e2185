package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// cancelProbe is a handler that reports its start and then the cause its
// context ended with, and when.
type cancelProbe struct {
	started chan struct{}
	ended   chan cancelEnd
}

// cancelEnd is how and when a probed handler's context ended.
type cancelEnd struct {
	cause error
	at    time.Time
}

func newCancelProbe() *cancelProbe {
	return &cancelProbe{started: make(chan struct{}, 1), ended: make(chan cancelEnd, 1)}
}

func (p *cancelProbe) handle(ctx context.Context, _ *docket.Job) docket.Result {
	p.started <- struct{}{}
	<-ctx.Done()
	cause := context.Cause(ctx)
	p.ended <- cancelEnd{cause: cause, at: time.Now()}
	return docket.Fail(cause)
}

// cancelWhileRunning starts a Worker of client whose handler holds one run
// until its context ends, cancels the run while the handler executes, and
// returns how long after Cancel's commit the handler's context ended. The
// handler's late verdict must have outcome late, and the run must stay
// cancelled with its error history empty.
func cancelWhileRunning(t *testing.T, client *docket.Client, heartbeat time.Duration, late docket.VerdictOutcome) time.Duration {
	t.Helper()
	ctx := testkit.Context(t)
	probe := newCancelProbe()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		ClaimTTL: 2 * heartbeat, HeartbeatInterval: heartbeat, Handler: probe.handle})
	events.WaitFor(t, "the worker to listen", testkit.WorkerListening)
	if _, err := client.InsertRun(ctx, docket.NewRun{RunID: "long", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h",
		State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-probe.started:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the handler never started")
	}
	res, err := client.Cancel(ctx, docket.Tenant("acme"), "long")
	committed := time.Now()
	if err != nil || !res.Changed || res.Run.Status != docket.StatusCancelled {
		t.Fatalf("Cancel: %+v, %v", res, err)
	}
	var end cancelEnd
	select {
	case end = <-probe.ended:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the cancelled run's handler kept running")
	}
	if !errors.Is(end.cause, docket.ErrRunCancelled) || end.cause.Error() != "docket: run cancelled by an operator" {
		t.Fatalf("the handler's context ended with %v, want ErrRunCancelled", end.cause)
	}
	events.WaitFor(t, "the late verdict", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(e docket.WorkerEvent) bool { return e.Kind == docket.EventVerdict && e.RunID == "long" }) > 0
	})
	for _, e := range events.All() {
		if e.Kind == docket.EventVerdict && e.RunID == "long" && e.Outcome != late {
			t.Fatalf("the late verdict's outcome is %s (%v), want %s", e.Outcome, e.Err, late)
		}
	}
	testkit.StopWorker(t, w, runResult)
	run, err := client.FetchRun(ctx, docket.Tenant("acme"), "long")
	if err != nil || run.Status != docket.StatusCancelled || len(run.Errors) != 0 || run.Claimed() {
		t.Fatalf("the cancelled run: %+v, %v", run, err)
	}
	return end.at.Sub(committed)
}

// Cancel ends an executing handler through the Worker's LISTEN session, in
// every pgx execution mode, long before a heartbeat could: the heartbeat
// is an hour, so only the cancel's notification can end the handler, with
// a cause matching ErrRunCancelled, and the handler's late verdict is
// refused as cancelled, not as a newer holder's.
func TestWorkerCancelEndsTheHandlerPromptly(t *testing.T) {
	t.Parallel()
	for _, mode := range testkit.QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			cfg := testkit.PoolConfig(t, pgtest.NewDatabase(t), 4)
			cfg.ConnConfig.DefaultQueryExecMode = mode
			client := testkit.OpenClient(t, testkit.Pool(t, cfg), testkit.TenantFairConfig(2))
			latency := cancelWhileRunning(t, client, time.Hour, docket.VerdictCancelled)
			t.Logf("%s: the handler's context ended %v after the cancel's commit", mode, latency)
		})
	}
}

// Behind PgBouncer's transaction pooling a LISTEN session is not reliable,
// so the bound on a cancel is the Worker's HeartbeatInterval: the next
// refresh finds the run cancelled and ends the handler with a cause
// matching ErrRunCancelled; the verdict is then dropped unsent.
func TestWorkerCancelBehindPgBouncerEndsTheHandlerAtTheNextHeartbeat(t *testing.T) {
	t.Parallel()
	b := testkit.StartBouncer(t, pgtest.NewDatabase(t), 3)
	client := testkit.OpenClient(t, testkit.BouncerPool(t, b, 4), testkit.TenantFairConfig(2))
	cancelWhileRunning(t, client, 200*time.Millisecond, docket.VerdictDropped)
}

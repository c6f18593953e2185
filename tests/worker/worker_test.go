package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// capSample is what the sampler saw over a drain.
type capSample struct {
	samples     int
	violations  []string
	maxAdmitted int64
	err         error
}

// sampleCaps reads every scope's admitted count and live claims in one
// statement each time tick fires, right after a claim call, until ctx ends,
// and records every snapshot in which a scope is over capPerScope, holds
// more claims than admissions, or holds a claim without an admission.
func sampleCaps(ctx context.Context, pool *pgxpool.Pool, capPerScope int64, tick <-chan struct{}, gate *snapshotGate) capSample {
	var out capSample
	defer gate.close()
	for {
		select {
		case <-ctx.Done():
			return out
		case <-tick:
		}
		gate.begin()
		rows, err := pool.Query(ctx, `
			select scope_key,
			       count(*) filter (where tenant_admitted_at is not null),
			       count(*) filter (where claim_token is not null),
			       count(*) filter (where claim_token is not null and tenant_admitted_at is null)
			  from docket_runs
			 where status = 'running' and poisoned_at is null
			 group by scope_key`)
		if err != nil {
			if ctx.Err() == nil {
				out.err = err
			}
			return out
		}
		for rows.Next() {
			var scope string
			var admitted, claimed, unadmittedClaims int64
			if err := rows.Scan(&scope, &admitted, &claimed, &unadmittedClaims); err != nil {
				out.err = err
				rows.Close()
				return out
			}
			out.maxAdmitted = max(out.maxAdmitted, admitted)
			if admitted > capPerScope || claimed > admitted || unadmittedClaims > 0 {
				out.violations = append(out.violations, fmt.Sprintf(
					"%s: admitted %d, claimed %d, unadmitted claims %d, cap %d", scope, admitted, claimed, unadmittedClaims, capPerScope))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			if ctx.Err() == nil {
				out.err = err
			}
			return out
		}
		out.samples++
		gate.end()
	}
}

// TestWorkerDrainKeepsEveryTenantWithinItsCap drains ten tenants at a cap
// of three while a sampler checks every tenant's admitted and claimed
// counts against the cap, with verdicts written at once, with verdicts
// that wait for a batch (their runs stay admitted meanwhile), and with
// those verdicts and runs claimed ahead of the handlers (held runs are
// admitted too), and with the Worker deciding how many it holds ahead.
func TestWorkerDrainKeepsEveryTenantWithinItsCap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		verdictWait time.Duration
		claimAhead  int
	}{{0, docket.NoClaimAhead}, {20 * time.Millisecond, docket.NoClaimAhead}, {20 * time.Millisecond, 4}, {0, 0}} {
		t.Run(fmt.Sprintf("verdict_wait_%s_claim_ahead_%d", c.verdictWait, c.claimAhead), func(t *testing.T) {
			t.Parallel()
			drainWithinCaps(t, c.verdictWait, c.claimAhead)
		})
	}
}

// drainWithinCaps is TestWorkerDrainKeepsEveryTenantWithinItsCap with one
// VerdictBatchWait and ClaimAhead.
func drainWithinCaps(t *testing.T, verdictWait time.Duration, claimAhead int) {
	const capPerTenant, perTenant = 3, 50
	url := pgtest.NewDatabase(t)
	pool := testkit.WorkerPool(t, url, 16)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(capPerTenant))
	var tenants []string
	for i := range 10 {
		tenants = append(tenants, fmt.Sprintf("tenant-%02d", i))
	}
	ids := testkit.WorkerInsertRuns(t, client, perTenant, tenants...)

	samplerCtx, stopSampler := context.WithCancel(context.Background())
	sampled := make(chan capSample, 1)
	samplerPool := testkit.WorkerPool(t, url, 1)
	// Every claim call that leased runs asks for a snapshot; one that
	// arrives while the sampler is busy folds into the pending one.
	tick := make(chan struct{}, 1)
	gate := newSnapshotGate()
	go func() { sampled <- sampleCaps(samplerCtx, samplerPool, capPerTenant, tick, gate) }()

	counter := testkit.NewWorkerCounter()
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 8, PollInterval: 100 * time.Millisecond, Tuning: docket.WorkerTuning{ClaimAhead: claimAhead, VerdictBatchWait: verdictWait}, Logger: slog.New(log),
		OnEvent: func(ev docket.WorkerEvent) {
			events.Hook(ev)
			if ev.Kind == docket.EventClaimed && ev.Leases > 0 {
				select {
				case tick <- struct{}{}:
				default:
				}
			}
		},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			gate.await(tick) // every lease is held during a whole snapshot
			return docket.Complete(json.RawMessage(`{"n":1}`))
		},
	})
	events.WaitDone(t, len(ids))
	stopSampler()
	sample := <-sampled
	testkit.StopWorker(t, w, runResult)

	if sample.err != nil {
		t.Fatalf("sampler: %v", sample.err)
	}
	if sample.samples == 0 {
		t.Fatalf("the sampler took no snapshot")
	}
	if len(sample.violations) > 0 {
		t.Fatalf("%d of %d snapshots broke a cap, first: %s", len(sample.violations), sample.samples, sample.violations[0])
	}
	t.Logf("%d snapshots, highest admitted count of a tenant %d (cap %d)", sample.samples, sample.maxAdmitted, capPerTenant)
	counter.ExpectEach(t, ids, 1)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1 and state = '{"n":1}'`); got != int64(len(ids)) {
		t.Fatalf("%d runs committed exactly once as done, want %d", got, len(ids))
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at is not null or claim_token is not null`); got != 0 {
		t.Fatalf("%d runs still hold a marker or claim", got)
	}
	if got := testkit.QueryInt64(t, pool, `select coalesce(sum(unfinished_count), 0) from docket_claim_schedule`); got != 0 {
		t.Fatalf("unfinished count %d after the drain, want 0", got)
	}
	testkit.WorkerExpectQuiet(t, log)
	expectNoIdentities(t, log, append(tenants, "tenant-00-0")...)
}

func TestWorkerStopLetsHandlersFinishThenHandsBackTheRest(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	pool := testkit.WorkerPool(t, url, 12)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(10))
	slow := []string{"slow-0", "slow-1", "slow-2"}
	var runs []docket.NewRun
	for _, id := range append([]string{"quick", "finisher"}, slow...) {
		runs = append(runs, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1",
			State: json.RawMessage(`{"n":0}`)})
	}
	if _, err := client.InsertRuns(testkit.Context(t), runs); err != nil {
		t.Fatalf("insert: %v", err)
	}

	counter := testkit.NewWorkerCounter()
	stopping := make(chan struct{})
	var started sync.WaitGroup
	started.Add(len(runs))
	var causesMu sync.Mutex
	var causes []error
	handler := func(ctx context.Context, job *docket.Job) docket.Result {
		if counter.Add(job.RunID) > 1 {
			return docket.Complete(nil) // the second worker finishes everything
		}
		started.Done()
		switch job.RunID {
		case "quick":
			return docket.Complete(nil)
		case "finisher":
			<-stopping
			return docket.Complete(nil)
		}
		<-ctx.Done()
		causesMu.Lock()
		causes = append(causes, context.Cause(ctx))
		causesMu.Unlock()
		return docket.Complete(json.RawMessage(`{"n":"too late"}`))
	}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: len(runs), Handler: handler, OnEvent: events.Hook})
	allStarted := make(chan struct{})
	go func() { started.Wait(); close(allStarted) }()
	waitClosed(t, "every handler to start", allStarted)

	// Stop with a drain window that the test closes only once the finisher
	// has committed, so what finishes and what is handed back is exact.
	stopCtx, endDrain := context.WithCancel(context.Background())
	stopResult := make(chan error, 1)
	go func() { stopResult <- w.Stop(stopCtx) }()
	close(stopping)
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	events.WaitWritten(t, "complete", "finisher")
	endDrain()
	select {
	case err := <-stopResult:
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatalf("stop did not return")
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}

	for _, id := range []string{"quick", "finisher"} {
		if r := rs.Row(id); r.Status != "done" || r.Seq != 1 {
			t.Errorf("%s: status %s seq %d, want done at seq 1", id, r.Status, r.Seq)
		}
	}
	for _, id := range slow {
		r := rs.Row(id)
		if r.Status != "running" || r.Token != nil || r.ClaimedAt != nil || r.WakeAt == nil || r.AdmittedAt == nil || r.Seq != 1 {
			t.Errorf("%s: %+v, want running, unclaimed, due, admission kept, seq 1", id, r)
		}
		run, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		if run.LatestCheckpointType != "stop" || string(run.State) != `{"n": 0}` || run.Step != 0 {
			t.Errorf("%s: checkpoint %q state %s step %d, want the stop hand-back with the document unchanged",
				id, run.LatestCheckpointType, run.State, run.Step)
		}
		inspection, err := client.InspectRun(testkit.Context(t), docket.Tenant("t"), id)
		if err != nil {
			t.Fatalf("inspect %s: %v", id, err)
		}
		if inspection.State != docket.AdmissionAdmittedReady {
			t.Errorf("%s: admission state %s, want %s", id, inspection.State, docket.AdmissionAdmittedReady)
		}
	}
	causesMu.Lock()
	if len(causes) != len(slow) {
		t.Errorf("%d slow handlers saw their context end, want %d", len(causes), len(slow))
	}
	for _, cause := range causes {
		if !errors.Is(cause, docket.ErrWorkerStopped) {
			t.Errorf("handler context cause %v, want ErrWorkerStopped", cause)
		}
	}
	causesMu.Unlock()
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where claim_token is not null`); got != 0 {
		t.Fatalf("%d runs still claimed after stop", got)
	}

	// Nothing was lost: a second worker finishes the handed-back runs.
	events2 := testkit.NewWorkerEvents()
	w2, run2 := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, Handler: handler, OnEvent: events2.Hook})
	events2.WaitWritten(t, "complete", slow...)
	testkit.StopWorker(t, w2, run2)
	for _, id := range []string{"quick", "finisher"} {
		if got := counter.Get(id); got != 1 {
			t.Errorf("%s: %d invocations, want 1", id, got)
		}
	}
	for _, id := range slow {
		if got := counter.Get(id); got != 2 {
			t.Errorf("%s: %d invocations, want 2 (stopped once, finished once)", id, got)
		}
		if r := rs.Row(id); r.Seq != 2 {
			t.Errorf("%s: seq %d, want 2 (hand-back, completion)", id, r.Seq)
		}
	}
}

// severablePool opens a pool whose connections carry appName and that the
// test can cut off from the database, as if its process had died: once
// severed is set, it opens and hands out no connection.
func severablePool(t *testing.T, databaseURL, appName string) (*pgxpool.Pool, *atomic.Bool) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = 8
	cfg.ConnConfig.RuntimeParams["application_name"] = appName
	severed := &atomic.Bool{}
	errSevered := errors.New("connection severed by the test")
	cfg.BeforeConnect = func(context.Context, *pgx.ConnConfig) error {
		if severed.Load() {
			return errSevered
		}
		return nil
	}
	cfg.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
		if severed.Load() {
			return false, errSevered
		}
		return true, nil
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, severed
}

func TestWorkerCrashedHolderIsStolenAndTheRunCommitsOnce(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	const crashedApp = "wk_crashed_worker"
	url := pgtest.NewDatabase(t)
	observer := testkit.WorkerPool(t, url, 4)
	crashedPool, severed := severablePool(t, url, crashedApp)
	crashedClient := testkit.OpenClient(t, crashedPool, testkit.TenantFairConfig(1))
	survivor := testkit.OpenClient(t, testkit.WorkerPool(t, url, 8), testkit.TenantFairConfig(1))
	rs := &testkit.RunStore{T: t, Pool: observer, Client: survivor}
	rs.Insert("acme", "run-crash-1")

	// The first worker claims the run, then its process "dies": its
	// sessions are terminated and it can reach the database no more.
	counter := testkit.NewWorkerCounter()
	crashedStarted, crashedCancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var crashedCause error
	crashedLog := &testkit.WorkerLogRecorder{}
	crashedEvents := testkit.NewWorkerEvents()
	crashed, crashedRun := testkit.StartWorker(t, crashedClient, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, Logger: slog.New(crashedLog), OnEvent: crashedEvents.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add("crashed")
			close(crashedStarted)
			<-ctx.Done()
			crashedCause = context.Cause(ctx)
			close(crashedCancelled)
			<-release // a stuck handler that outlives its claim
			return docket.Complete(json.RawMessage(`{"by":"crashed"}`))
		},
	})
	waitClosed(t, "the first worker to start the run", crashedStarted)
	severed.Store(true)
	testkit.ExecSQL(t, observer, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, crashedApp)

	// A second worker steals the claim once it expired and completes it.
	type stolenJob struct {
		class   docket.WorkClass
		attempt int
		seq     int64
	}
	var stolen stolenJob
	var stolenMu sync.Mutex
	survivorEvents := testkit.NewWorkerEvents()
	survivorWorker, survivorRun := testkit.StartWorker(t, survivor, docket.WorkerConfig{
		Concurrency: 2, ClaimTTL: ttl, OnEvent: survivorEvents.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add("survivor")
			stolenMu.Lock()
			stolen = stolenJob{job.Class, job.Attempt, job.CheckpointSeq}
			stolenMu.Unlock()
			return docket.Complete(json.RawMessage(`{"by":"survivor"}`))
		},
	})
	survivorEvents.WaitWritten(t, "complete", "run-crash-1")
	testkit.StopWorker(t, survivorWorker, survivorRun)

	// The first worker comes back to life: its handler finally returns, and
	// its claim having expired, it sends no commit.
	waitClosed(t, "the first worker to give up its claim", crashedCancelled)
	severed.Store(false)
	close(release)
	crashedEvents.WaitFor(t, "the stale commit to be dropped unsent", testkit.WorkerDropped("run-crash-1", "complete"))
	testkit.StopWorker(t, crashed, crashedRun)

	if !errors.Is(crashedCause, docket.ErrClaimLost) {
		t.Errorf("first handler's context cause %v, want ErrClaimLost", crashedCause)
	}
	if dropped := crashedLog.Find("docket worker dropped a verdict; the claim was already given up"); len(dropped) != 1 || dropped[0].Attrs["result"] != "complete" {
		t.Errorf("dropped verdicts logged %+v, want the complete verdict once", dropped)
	}
	if refused := crashedLog.Find("docket worker commit refused by the claim fence; a newer holder owns the run"); len(refused) != 0 {
		t.Errorf("the crashed worker sent its commit after its claim expired: %+v", refused)
	}
	if counter.Get("crashed") != 1 || counter.Get("survivor") != 1 {
		t.Errorf("invocations crashed=%d survivor=%d, want 1 each", counter.Get("crashed"), counter.Get("survivor"))
	}
	stolenMu.Lock()
	// The crashed holder's attempt ended without a verdict, so it does not
	// count: the survivor runs the first handler attempt.
	if stolen != (stolenJob{docket.ClassExpired, 1, 0}) {
		t.Errorf("stolen job %+v, want class expired, attempt 1, seq 0", stolen)
	}
	stolenMu.Unlock()
	r := rs.Row("run-crash-1")
	if r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil || r.Unfinished != 0 {
		t.Fatalf("run %+v, want done by exactly one commit, no claim, no marker", r)
	}
	run, err := survivor.FetchRun(testkit.Context(t), docket.Tenant("acme"), "run-crash-1")
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if string(run.State) != `{"by": "survivor"}` {
		t.Fatalf("state %s, want the survivor's", run.State)
	}
	expectNoIdentities(t, crashedLog, "acme", "run-crash-1")
}

func TestWorkerWakesOnNotifyWithoutWaitingForAPoll(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	events := testkit.NewWorkerEvents()
	started := map[string]chan struct{}{"plain": make(chan struct{}), "in-tx": make(chan struct{})}
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			close(started[job.RunID])
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "the worker to listen", testkit.WorkerListening)

	// With a one-minute poll interval, only the notification can start the
	// run within the deadline.
	if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{RunID: "plain", Scope: docket.Tenant("t"),
		GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	waitClosed(t, "the notified run to start", started["plain"])

	tx, err := pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{RunID: "in-tx", Scope: docket.Tenant("t"),
		GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("insert in tx: %v", err)
	}
	if err := tx.Commit(testkit.Context(t)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	waitClosed(t, "the run inserted in a transaction to start", started["in-tx"])
	events.WaitWritten(t, "complete", "plain", "in-tx")
	testkit.StopWorker(t, w, runResult)
}

func TestWorkerMapsHandlerResultsToFencedCommits(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 16)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(20))
	names := []string{"complete", "fail", "panic", "retry", "wait", "continue", "yield", "checkpoint", "zero", "invalid"}
	var runs []docket.NewRun
	for _, id := range names {
		runs = append(runs, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1",
			State: json.RawMessage(`{"n":0}`)})
	}
	if _, err := client.InsertRuns(testkit.Context(t), runs); err != nil {
		t.Fatalf("insert: %v", err)
	}
	counter := testkit.NewWorkerCounter()
	var problemsMu sync.Mutex
	var problems []string
	problem := func(format string, args ...any) {
		problemsMu.Lock()
		defer problemsMu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	handler := func(ctx context.Context, job *docket.Job) docket.Result {
		n := counter.Add(job.RunID)
		switch job.RunID {
		case "complete":
			// The job carries its claim's time, which the run's row holds
			// until a heartbeat refreshes it.
			run, err := client.FetchRun(ctx, job.Scope, job.RunID)
			if err != nil || run.ClaimedAt == nil || !run.ClaimedAt.Equal(job.ClaimedAt) {
				problem("job claimed at %v, run claimed at %v (%v)", job.ClaimedAt, run.ClaimedAt, err)
			}
			return docket.Complete(json.RawMessage(`{"r":"complete"}`))
		case "fail":
			return docket.Fail(errors.New("boom"))
		case "panic":
			panic("boom")
		case "retry":
			return docket.RetryAfter(time.Hour)
		case "wait":
			return docket.WaitExternal(json.RawMessage(`{"r":"wait"}`))
		case "continue":
			if n == 1 {
				return docket.Continue(1, json.RawMessage(`{"r":"continued"}`))
			}
			if job.Step != 1 || string(job.State) != `{"r": "continued"}` || job.CheckpointSeq != 1 {
				problem("continue resumed at step %d state %s seq %d", job.Step, job.State, job.CheckpointSeq)
			}
			return docket.Complete(nil)
		case "yield":
			if n == 1 {
				return docket.Yield()
			}
			return docket.Complete(nil)
		case "checkpoint":
			if err := job.Checkpoint(ctx, 1, json.RawMessage(`{"c":1}`)); err != nil {
				problem("checkpoint: %v", err)
			}
			if job.Step != 1 || job.CheckpointSeq != 1 || string(job.State) != `{"c": 1}` {
				problem("after checkpoint: step %d seq %d state %s", job.Step, job.CheckpointSeq, job.State)
			}
			return docket.Complete(nil)
		case "invalid":
			return docket.Complete(json.RawMessage(`{not json`))
		}
		return docket.Result{}
	}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 4, Handler: handler, OnEvent: events.Hook,
		Retry: docket.RetryPolicy{MaxAttempts: 1}})
	// Each run's last verdict written; a poll of the table would take the
	// yielded continue and yield runs for settled (see the exec mode test).
	events.WaitVerdicts(t, map[string]string{
		"complete": "complete", "fail": "fail", "panic": "panic", "retry": "retry", "wait": "wait",
		"continue": "complete", "yield": "complete", "checkpoint": "complete", "zero": "no_result", "invalid": "invalid_result",
	})
	testkit.StopWorker(t, w, runResult)

	type want struct {
		status, checkpoint, state string
		seq                       int64
		step                      int
	}
	wants := map[string]want{
		"complete":   {"done", "complete", `{"r": "complete"}`, 1, 0},
		"fail":       {"failed", "fail", `{"n": 0}`, 1, 0},
		"panic":      {"failed", "panic", `{"n": 0}`, 1, 0},
		"retry":      {"running", "retry", `{"n": 0}`, 1, 0},
		"wait":       {"waiting", "wait", `{"r": "wait"}`, 1, 0},
		"continue":   {"done", "complete", `{"r": "continued"}`, 2, 1},
		"yield":      {"done", "complete", `{"n": 0}`, 2, 0},
		"checkpoint": {"done", "complete", `{"c": 1}`, 2, 1},
		"zero":       {"failed", "no_result", `{"n": 0}`, 1, 0},
		"invalid":    {"failed", "invalid_result", `{"n": 0}`, 1, 0},
	}
	for _, id := range names {
		run, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		got := want{string(run.Status), run.LatestCheckpointType, string(run.State), run.CheckpointSeq, run.Step}
		if got != wants[id] {
			t.Errorf("%s: got %+v, want %+v", id, got, wants[id])
		}
	}
	retry := (&testkit.RunStore{T: t, Pool: pool, Client: client}).Row("retry")
	if retry.AdmittedAt != nil || retry.WakeAt == nil || time.Until(*retry.WakeAt) < 30*time.Minute {
		t.Errorf("retry: %+v, want no admission and a wake time about an hour ahead", retry)
	}
	for _, id := range names {
		wantCalls := 1
		if id == "continue" || id == "yield" {
			wantCalls = 2
		}
		if got := counter.Get(id); got != wantCalls {
			t.Errorf("%s: %d invocations, want %d", id, got, wantCalls)
		}
	}
	problemsMu.Lock()
	defer problemsMu.Unlock()
	if len(problems) > 0 {
		t.Fatalf("handler checks failed: %v", problems)
	}
}

func TestWorkerStoppedBeforeRunNeverStartsAndRunsOnce(t *testing.T) {
	t.Parallel()
	client := testkit.OpenClient(t, testkit.NewPool(t), testkit.TenantFairConfig(1))
	w, err := docket.NewWorker(client, docket.WorkerConfig{Concurrency: 1,
		Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	if err := w.Stop(testkit.Context(t)); err != nil {
		t.Fatalf("stop before run: %v", err)
	}
	if err := w.Run(testkit.Context(t)); err != nil {
		t.Fatalf("run after stop: %v", err)
	}
	if err := w.Run(testkit.Context(t)); !errors.Is(err, docket.ErrWorkerStarted) {
		t.Fatalf("second run: %v, want ErrWorkerStarted", err)
	}
}

func TestWorkerBacksOffOnLockContentionWithoutReportingFailure(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "r")

	// Another session holds the policy row, so every claim call times out
	// on its lock and is refused with lock_contention.
	holder, err := pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = holder.Rollback(context.Background()) }()
	if _, err := holder.Exec(testkit.Context(t), `select 1 from docket_claim_policy for update`); err != nil {
		t.Fatalf("lock the policy row: %v", err)
	}

	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	handled := make(chan struct{})
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 1, Logger: slog.New(log), OnEvent: events.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result {
			close(handled)
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "repeated lock contention", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
			unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](ev.Err)
			return ev.Kind == docket.EventClaimed && ok && unavailable.Reason == "lock_contention"
		}) >= 3
	})
	if err := holder.Rollback(testkit.Context(t)); err != nil {
		t.Fatalf("release the policy row: %v", err)
	}
	waitClosed(t, "the run to be handled once the lock is free", handled)
	events.WaitWritten(t, "complete", "r")
	testkit.StopWorker(t, w, runResult)
	testkit.WorkerExpectQuiet(t, log)
}

func TestWorkerPoisonsRunsOverMaxClaimAttemptsWithoutHandlingThem(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "worn")
	rs.Insert("t", "fresh")
	testkit.ExecSQL(t, pool, `update docket_runs set claim_attempts = 3 where run_id = 'worn'`)

	counter := testkit.NewWorkerCounter()
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 1, MaxClaimAttempts: 3, Logger: slog.New(log), OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "the worn run poisoned and the fresh run done", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerWritten(evs, "fresh", "complete") &&
			testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventClaimed && ev.Poisoned > 0 }) > 0
	})
	testkit.StopWorker(t, w, runResult)

	worn := rs.Row("worn")
	if worn.Status != "running" || worn.PoisonedAt == nil || worn.PoisonReason == nil ||
		*worn.PoisonReason != "max_claim_attempts_exceeded" || worn.Token != nil || worn.AdmittedAt != nil {
		t.Fatalf("worn run %+v, want poisoned for max_claim_attempts_exceeded without claim or marker", worn)
	}
	if counter.Get("worn") != 0 || counter.Get("fresh") != 1 {
		t.Fatalf("invocations worn=%d fresh=%d, want 0 and 1", counter.Get("worn"), counter.Get("fresh"))
	}
	poisoned := log.Find("docket worker claim poisoned runs over MaxClaimAttempts")
	if len(poisoned) != 1 || poisoned[0].Attrs["count"] != "1" {
		t.Fatalf("poison records %+v, want one with count 1", poisoned)
	}
	testkit.WorkerExpectQuiet(t, log)
}

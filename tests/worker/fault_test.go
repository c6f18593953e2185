package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// invocations records every handler invocation by a unique number, so
// the committed state of a run can be traced to the one invocation whose
// completion was committed.
type invocations struct {
	next  atomic.Int64
	mu    sync.Mutex
	byRun map[string][]int64
}

// add records an invocation of runID and returns its number.
func (h *invocations) add(runID string) int64 {
	n := h.next.Add(1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.byRun[runID] = append(h.byRun[runID], n)
	return n
}

// of returns the invocation numbers of runID.
func (h *invocations) of(runID string) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.byRun[runID]...)
}

// gate holds handlers until it opens, so a test can restart the server
// while every worker slot is busy.
type gate struct {
	mu      sync.Mutex
	cond    *sync.Cond
	closed  bool
	waiting int
	// arrived is closed, and replaced, when a handler reaches the gate.
	arrived chan struct{}
}

func newHardGate() *gate {
	g := &gate{closed: true, arrived: make(chan struct{})}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// pass blocks while the gate is closed.
func (g *gate) pass() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.waiting++
	close(g.arrived)
	g.arrived = make(chan struct{})
	for g.closed {
		g.cond.Wait()
	}
	g.waiting--
}

// set opens or closes the gate.
func (g *gate) set(closed bool) {
	g.mu.Lock()
	g.closed = closed
	g.mu.Unlock()
	g.cond.Broadcast()
}

// waitHeld waits until n handlers wait at the closed gate, failing the
// test after testkit.WorkerDeadline.
func (g *gate) waitHeld(t *testing.T, n int) {
	t.Helper()
	timeout := time.NewTimer(testkit.WorkerDeadline)
	defer timeout.Stop()
	for {
		g.mu.Lock()
		held, arrived := g.waiting, g.arrived
		g.mu.Unlock()
		if held == n {
			return
		}
		select {
		case <-arrived:
		case <-timeout.C:
			t.Fatalf("timed out waiting for %d handlers at the gate; %d there", n, held)
		}
	}
}

func TestWorkersSurviveTwoRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server of its own; skipped with -short")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A server of its own: a restart cuts every connection to the server,
	// and other tests share the harness's one.
	srv, err := pglocal.Start(ctx, pglocal.Options{Logf: t.Logf})
	if err != nil {
		t.Fatalf("this test restarts a PostgreSQL server of its own and could not start one (install PostgreSQL server binaries or set %s): %v",
			pglocal.EnvBinDir, err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	url := srv.URL("postgres")
	if err := testkit.URLMigrator(t, url, docket.MigratorConfig{}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	observer := testkit.WorkerPool(t, url, 2)
	const workers = 3
	clients := make([]*docket.Client, workers)
	for i := range clients {
		clients[i] = testkit.OpenClient(t, testkit.WorkerPool(t, url, 12), testkit.TenantFairConfig(3))
	}
	ids := testkit.WorkerInsertRuns(t, clients[0], 40, "a", "b", "c", "d", "e")

	inv := &invocations{byRun: map[string][]int64{}}
	gate := newHardGate()
	logs := make([]*testkit.WorkerLogRecorder, workers)
	events := testkit.NewWorkerEvents()
	type running struct {
		w      *docket.Worker
		result <-chan error
	}
	var started []running
	for i, client := range clients {
		logs[i] = &testkit.WorkerLogRecorder{}
		w, result := testkit.StartWorker(t, client, docket.WorkerConfig{
			Concurrency: 4, Tuning: docket.WorkerTuning{ClaimAhead: 1}, ClaimTTL: 2 * time.Second, PollInterval: 100 * time.Millisecond, Logger: slog.New(logs[i]),
			OnEvent: events.Hook,
			Handler: func(_ context.Context, job *docket.Job) docket.Result {
				n := inv.add(job.RunID)
				gate.pass()
				return docket.Complete(json.RawMessage(`{"invocation":` + strconv.FormatInt(n, 10) + `}`))
			},
		})
		started = append(started, running{w, result})
	}
	t.Cleanup(func() { gate.set(false) })
	// Each restart comes while every handler of every worker holds a
	// claimed run and has not returned yet, and each worker holds one more
	// run ahead of them: the 15 claims take every admission (5 tenants at a
	// cap of 3), so each worker gets its four handlers' runs and one held.
	const slots = workers * 4
	for i, doneBefore := range []int{0, len(ids) / 2} {
		events.WaitDone(t, doneBefore)
		gate.set(true)
		gate.waitHeld(t, slots)
		if err := srv.Restart(ctx); err != nil {
			t.Fatalf("restart %d of PostgreSQL: %v", i+1, err)
		}
		gate.set(false)
	}
	events.WaitFor(t, "every run done after two restarts", allDone(observer, len(ids)))
	for _, r := range started {
		testkit.StopWorker(t, r.w, r.result)
	}

	rows, err := observer.Query(ctx, `select run_id, status, checkpoint_seq, (state->>'invocation')::bigint from docket_runs`)
	if err != nil {
		t.Fatalf("read runs: %v", err)
	}
	final, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		RunID, Status   string
		Seq, Invocation int64
	}])
	if err != nil {
		t.Fatalf("read runs: %v", err)
	}
	lost, rehandled := len(ids)-len(final), 0
	for _, r := range final {
		if r.Status != "done" || r.Seq != 1 {
			lost++
			t.Errorf("run %s is %s at checkpoint %d, want done by exactly one commit", r.RunID, r.Status, r.Seq)
		}
		invocations := inv.of(r.RunID)
		committed := 0
		for _, n := range invocations {
			if n == r.Invocation {
				committed++
			}
		}
		if committed != 1 {
			t.Errorf("run %s: committed invocation %d is not one of its invocations %v", r.RunID, r.Invocation, invocations)
		}
		if len(invocations) > 1 {
			rehandled++
		}
	}
	if got := testkit.QueryInt64(t, observer, `select count(*) from docket_runs where claim_token is not null or tenant_admitted_at is not null`); got != 0 {
		t.Errorf("%d runs keep a claim or marker", got)
	}
	testkit.ExpectRingExact(t, observer)
	for i, log := range logs {
		if len(log.Find("docket worker listener failed; reconnecting")) == 0 {
			t.Errorf("worker %d logged no listener failure; did the restarts reach it?", i)
		}
	}
	t.Logf("%d workers, 2 restarts with %d handlers in flight and one run held ahead per worker each: %d runs, runs lost: %d, completed commits: exactly 1 per run; %d runs handled more than once, %d invocations in all",
		workers, slots, len(ids), lost, rehandled, inv.next.Load())
}

// flakyApp is the application_name of the worker whose heartbeats fail.
const flakyApp = "hard_flaky_heartbeats"

// failHeartbeats installs a trigger that refuses every claim refresh
// (an update that keeps the claim token, status and checkpoint) of sessions
// named flakyApp, and nothing else.
const failHeartbeats = `
create function hard_fail_heartbeat() returns trigger language plpgsql as $$
begin
    if current_setting('application_name') = '` + flakyApp + `'
            and old.claim_token is not null and new.claim_token = old.claim_token
            and new.status = old.status and new.checkpoint_seq = old.checkpoint_seq then
        raise exception 'injected heartbeat failure';
    end if;
    return new;
end;
$$;
create trigger hard_fail_heartbeat before update on docket_runs
    for each row execute function hard_fail_heartbeat();`

func TestWorkerWithFailingHeartbeatsKeepsNoClaim(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	url := pgtest.NewDatabase(t)
	observer := testkit.WorkerPool(t, url, 4)
	testkit.ExecSQL(t, observer, failHeartbeats)
	flakyCfg := testkit.PoolConfig(t, url, 8)
	flakyCfg.ConnConfig.RuntimeParams["application_name"] = flakyApp
	flakyClient := testkit.OpenClient(t, testkit.Pool(t, flakyCfg), testkit.TenantFairConfig(1))
	survivor := testkit.OpenClient(t, testkit.WorkerPool(t, url, 8), testkit.TenantFairConfig(1))
	rs := &testkit.RunStore{T: t, Pool: observer, Client: survivor}
	rs.Insert("t", "r")

	// The flaky worker claims the run; every heartbeat it sends fails, while
	// its handler works on, unaware.
	counter := testkit.NewWorkerCounter()
	started, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var cause error
	flakyLog := &testkit.WorkerLogRecorder{}
	flakyEvents := testkit.NewWorkerEvents()
	flaky, flakyRun := testkit.StartWorker(t, flakyClient, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, Logger: slog.New(flakyLog), OnEvent: flakyEvents.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add("flaky")
			close(started)
			<-ctx.Done()
			cause = context.Cause(ctx)
			close(cancelled)
			<-release
			return docket.Complete(json.RawMessage(`{"by":"flaky"}`))
		},
	})
	waitClosed(t, "the flaky worker to start the run", started)
	var token uuid.UUID
	if err := observer.QueryRow(testkit.Context(t), `select claim_token from docket_runs where run_id = 'r'`).Scan(&token); err != nil {
		t.Fatalf("read the flaky claim: %v", err)
	}
	// A claim that cannot be refreshed for a ClaimTTL is given up.
	waitClosed(t, "the flaky worker to give up its claim", cancelled)
	if !errors.Is(cause, docket.ErrClaimLost) {
		t.Fatalf("flaky handler's context cause %v, want ErrClaimLost", cause)
	}
	if len(flakyLog.Find("docket worker heartbeat failed")) == 0 {
		t.Fatalf("the flaky worker logged no heartbeat failure")
	}

	// Another worker steals the expired claim and finishes the run.
	survivorEvents := testkit.NewWorkerEvents()
	survivorWorker, survivorRun := testkit.StartWorker(t, survivor, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, Logger: slog.New(slog.DiscardHandler), OnEvent: survivorEvents.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result {
			counter.Add("survivor")
			return docket.Complete(json.RawMessage(`{"by":"survivor"}`))
		},
	})
	survivorEvents.WaitWritten(t, "complete", "r")
	testkit.StopWorker(t, survivorWorker, survivorRun)

	// The flaky handler returns late: its worker sends no commit once the
	// claim may have expired, and the fence refuses one sent through the
	// public API.
	close(release)
	flakyEvents.WaitFor(t, "the late commit to be dropped unsent", testkit.WorkerDropped("r", "complete"))
	testkit.StopWorker(t, flaky, flakyRun)
	late := docket.Holder{Scope: docket.Tenant("t"), RunID: "r", Token: token}
	before := testkit.Snap(t, observer)
	_, err := flakyClient.Commit(testkit.Context(t), docket.CommitRequest{Holder: late, ExpectedSeq: 0, Step: 1,
		State: json.RawMessage(`{"by":"flaky"}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	if !errors.Is(err, docket.ErrStaleFence) {
		t.Fatalf("late commit of the flaky holder: %v, want ErrStaleFence", err)
	}
	if _, err := survivor.RefreshClaim(testkit.Context(t), late); !errors.Is(err, docket.ErrClaimLost) {
		t.Fatalf("refresh of the flaky claim: %v, want ErrClaimLost", err)
	}
	testkit.ExpectUnchanged(t, "the flaky holder's late writes", before, testkit.Snap(t, observer))

	if counter.Get("flaky") != 1 || counter.Get("survivor") != 1 {
		t.Fatalf("invocations flaky=%d survivor=%d, want 1 each", counter.Get("flaky"), counter.Get("survivor"))
	}
	r := rs.Row("r")
	if r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil || r.Unfinished != 0 {
		t.Fatalf("run %+v, want done by exactly one commit, no claim, no marker", r)
	}
	run, err := survivor.FetchRun(testkit.Context(t), docket.Tenant("t"), "r")
	if err != nil || string(run.State) != `{"by": "survivor"}` {
		t.Fatalf("state %s (%v), want the survivor's", run.State, err)
	}
	t.Logf("heartbeats failed: the claim was given up after the TTL, stolen and committed once; the late commit got ErrStaleFence")
}

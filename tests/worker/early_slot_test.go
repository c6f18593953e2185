package worker

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// quietWindow is how long a test watches for something that must not
// happen; it bounds the check, it asserts no latency.
const quietWindow = 300 * time.Millisecond

// TestWorkerFreesSlotWhileVerdictIsWritten stalls verdict commits of a
// one-slot worker behind row locks the test holds. The first stalled commit
// frees its slot at once, so the next run is claimed and handled while that
// commit still waits; a second stalled commit finds the one committing token
// taken and keeps its slot, so the third run is claimed only after it is
// written. The worker never holds more than twice Concurrency claims, and
// every run is handled and committed exactly once.
func TestWorkerFreesSlotWhileVerdictIsWritten(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	for _, id := range []string{"a", "b", "c"} {
		rs.Insert("t", id)
	}

	var mu sync.Mutex
	locks := map[string]pgx.Tx{}
	started := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{})}
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	// A worker of one claim slot: it holds no run ahead.
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: docket.NoClaimAhead}, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			if job.RunID != "c" {
				// Hold a share lock on the run's row until the test lets
				// go: the verdict's commit statement waits for it.
				tx, err := pool.Begin(ctx)
				if err != nil {
					t.Errorf("begin lock of %s: %v", job.RunID, err)
					return docket.Yield()
				}
				if _, err := tx.Exec(ctx, `select 1 from docket_runs where run_id = $1 for share`, job.RunID); err != nil {
					t.Errorf("lock %s: %v", job.RunID, err)
				}
				mu.Lock()
				locks[job.RunID] = tx
				mu.Unlock()
			}
			close(started[job.RunID])
			return docket.Complete(json.RawMessage(`{"ok":true}`))
		},
	})
	// Runs before the worker's own cleanup: a failing test must not leave
	// a commit waiting for a lock nobody releases.
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, tx := range locks {
			_ = tx.Rollback(context.Background())
		}
	})
	unlock := func(id string) {
		mu.Lock()
		tx := locks[id]
		mu.Unlock()
		if err := tx.Commit(testkit.Context(t)); err != nil {
			t.Fatalf("release lock of %s: %v", id, err)
		}
	}
	expectNotStarted := func(when string) {
		t.Helper()
		select {
		case <-started["c"]:
			t.Fatalf("%s: c started, want it unclaimed while b holds the only slot", when)
		case <-time.After(quietWindow):
		}
		if r := rs.Row("c"); r.Token != nil || r.Status != "running" {
			t.Fatalf("%s: c is %+v, want unclaimed", when, r)
		}
	}

	waitClosed(t, "a to start", started["a"])
	// a's verdict waits for its lock, yet b is claimed into the freed slot.
	waitClosed(t, "b to start while a's commit waits", started["b"])
	if r := rs.Row("a"); r.Status != "running" || r.Token == nil {
		t.Fatalf("a is %+v, want still claimed while its commit waits", r)
	}
	// b's verdict waits too; the committing token is a's, so b keeps the slot.
	expectNotStarted("a and b committing")
	unlock("a")
	events.WaitWritten(t, "complete", "a")
	expectNotStarted("b committing")
	unlock("b")
	waitClosed(t, "c to start once b is written", started["c"])
	events.WaitWritten(t, "complete", "c")
	testkit.StopWorker(t, w, runResult)

	counter.ExpectEach(t, []string{"a", "b", "c"}, 1)
	for _, id := range []string{"a", "b", "c"} {
		if r := rs.Row(id); r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done by one commit, no claim, no marker", id, r)
		}
	}
}

// TestWorkerClaimsAgainOnceAnEarlyVerdictIsWritten caps a tenant at one
// admission and stalls the first run's verdict commit: the claim call made
// into its early-freed slot finds the tenant still at its cap and leases
// nothing. Once the verdict is written the worker must claim again at once,
// not at the next poll a minute later, and the second run is handled.
func TestWorkerClaimsAgainOnceAnEarlyVerdictIsWritten(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(1))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "first")
	rs.Insert("t", "second")

	lockTaken := make(chan pgx.Tx, 1)
	secondStarted := make(chan struct{})
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			if job.RunID == "second" {
				close(secondStarted)
				return docket.Complete(nil)
			}
			tx, err := pool.Begin(ctx)
			if err == nil {
				_, err = tx.Exec(ctx, `select 1 from docket_runs where run_id = $1 for share`, job.RunID)
			}
			if err != nil {
				t.Errorf("lock first: %v", err)
			}
			lockTaken <- tx
			return docket.Complete(nil)
		},
	})
	var lock pgx.Tx
	select {
	case lock = <-lockTaken:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("first never started")
	}
	t.Cleanup(func() { _ = lock.Rollback(context.Background()) })
	select {
	case <-secondStarted:
		t.Fatal("second started while first still held the tenant's only admission")
	case <-time.After(quietWindow):
	}
	if err := lock.Commit(testkit.Context(t)); err != nil {
		t.Fatalf("release first's lock: %v", err)
	}
	waitClosed(t, "second to start once first's verdict is written", secondStarted)
	events.WaitWritten(t, "complete", "second")
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, []string{"first", "second"}, 1)
}

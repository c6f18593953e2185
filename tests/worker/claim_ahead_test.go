package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// aheadHandler runs one handler at a time under the test's control: each
// started run is announced on started and returns Complete once release is
// closed or its context ends. It records the most handlers that ran at once.
type aheadHandler struct {
	started chan string
	release chan struct{}
	counter *testkit.WorkerCounter

	running, most atomic.Int32
}

// newAheadHandler returns a handler whose runs wait for release.
func newAheadHandler(runs int) *aheadHandler {
	return &aheadHandler{started: make(chan string, runs), release: make(chan struct{}), counter: testkit.NewWorkerCounter()}
}

// handle is the worker's Handler.
func (h *aheadHandler) handle(ctx context.Context, job *docket.Job) docket.Result {
	now := h.running.Add(1)
	defer h.running.Add(-1)
	for {
		most := h.most.Load()
		if now <= most || h.most.CompareAndSwap(most, now) {
			break
		}
	}
	h.counter.Add(job.RunID)
	h.started <- job.RunID
	select {
	case <-h.release:
	case <-ctx.Done():
	}
	return docket.Complete(nil)
}

// first waits for the first handler to start and returns its run.
func (h *aheadHandler) first(t *testing.T) string {
	t.Helper()
	select {
	case id := <-h.started:
		return id
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("timed out waiting for a handler to start")
		return ""
	}
}

// newAheadStore opens a TenantFair client of cap 4 on a fresh database
// and inserts runs ids, due now, for tenant "t".
func newAheadStore(t *testing.T, ids []string) *testkit.RunStore {
	t.Helper()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	rs := &testkit.RunStore{T: t, Pool: pool, Client: testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))}
	for _, id := range ids {
		rs.Insert("t", id)
	}
	return rs
}

// aheadRun is a worker of one handler that claims ahead, started on a
// store of ids, as its first claim call left it: one run's handler running,
// others held.
type aheadRun struct {
	rs      *testkit.RunStore
	h       *aheadHandler
	events  *testkit.WorkerEvents
	w       *docket.Worker
	result  <-chan error
	running string
	held    []string
}

// startAhead starts a worker of one handler and claimAhead held runs on a
// store of ids and waits until it listens, its first handler runs and its
// claim calls leased a run for every slot; it fails the test unless
// exactly claimAhead other runs are then claimed.
func startAhead(t *testing.T, ids []string, claimAhead int) *aheadRun {
	t.Helper()
	a := &aheadRun{rs: newAheadStore(t, ids), h: newAheadHandler(len(ids)), events: testkit.NewWorkerEvents()}
	a.w, a.result = testkit.StartWorker(t, a.rs.Client, docket.WorkerConfig{
		Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: claimAhead}, PollInterval: time.Minute, OnEvent: a.events.Hook, Handler: a.h.handle,
	})
	a.events.WaitFor(t, "the LISTEN session", testkit.WorkerListening)
	a.running = a.h.first(t)
	a.events.WaitFor(t, fmt.Sprintf("%d runs leased", 1+claimAhead), leased(1+claimAhead))
	a.held = heldAhead(t, a.rs, ids, a.running)
	if len(a.held) != claimAhead {
		t.Fatalf("runs claimed besides the running %s: %v, want %d held ahead", a.running, a.held, claimAhead)
	}
	return a
}

// leased is the condition that the worker's claim calls leased n runs in all.
func leased(n int) func([]docket.WorkerEvent) bool {
	return func(events []docket.WorkerEvent) bool {
		total := 0
		for _, ev := range events {
			if ev.Kind == docket.EventClaimed {
				total += ev.Leases
			}
		}
		return total >= n
	}
}

// heldAhead returns the runs of ids other than running that rs shows
// claimed.
func heldAhead(t *testing.T, rs *testkit.RunStore, ids []string, running string) []string {
	t.Helper()
	var held []string
	for _, id := range ids {
		if r := rs.Row(id); id != running && r.Token != nil {
			held = append(held, id)
		}
	}
	return held
}

// TestWorkerClaimsAheadOfItsHandlers gives a worker of one handler two
// claims ahead: its first claim call leases three runs while only one
// handler runs, the other two wait claimed, and each starts as the handler
// before it returns, so every run is handled exactly once and never two
// at a time.
func TestWorkerClaimsAheadOfItsHandlers(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "b", "c", "d"}
	a := startAhead(t, ids, 2)
	if started := testkit.WorkerCountEvents(a.events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventHandlerStarted
	}); started != 1 {
		t.Fatalf("%d handlers started, want 1 while it runs", started)
	}

	close(a.h.release)
	a.events.WaitWritten(t, "complete", ids...)
	testkit.StopWorker(t, a.w, a.result)

	a.h.counter.ExpectEach(t, ids, 1)
	if most := a.h.most.Load(); most != 1 {
		t.Errorf("%d handlers ran at once, want 1", most)
	}
	for _, id := range ids {
		if r := a.rs.Row(id); r.Status != "done" || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done, no claim, no marker", id, r)
		}
	}
}

// TestWorkerStopHandsBackRunsHeldAhead stops a worker, gracefully and by
// ending Run's context, while its one handler runs and two runs wait
// claimed ahead of it. Neither held run starts: each is handed back at once
// with a "stop" verdict that keeps its admission, so it is due for the next
// worker, and Run reports no failure. The running handler's own verdict is
// written as usual on the graceful stop.
func TestWorkerStopHandsBackRunsHeldAhead(t *testing.T) {
	t.Parallel()
	for _, graceful := range []bool{true, false} {
		name := "context ended"
		if graceful {
			name = "graceful"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ids := []string{"a", "b", "c"}
			rs := newAheadStore(t, ids)
			client := rs.Client

			h := newAheadHandler(len(ids))
			events := testkit.NewWorkerEvents()
			w, err := docket.NewWorker(client, docket.WorkerConfig{
				Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: 2}, PollInterval: time.Minute, OnEvent: events.Hook, Handler: h.handle,
			})
			if err != nil {
				t.Fatalf("new worker: %v", err)
			}
			runCtx, endRun := context.WithCancel(context.Background())
			defer endRun()
			runResult := make(chan error, 1)
			go func() { runResult <- w.Run(runCtx) }()

			running := h.first(t)
			events.WaitFor(t, "three runs leased", leased(3))
			held := heldAhead(t, rs, ids, running)
			if len(held) != 2 {
				t.Fatalf("runs claimed besides the running %s: %v, want two held ahead", running, held)
			}

			var stopped sync.WaitGroup
			var stopErr error
			if graceful {
				stopCtx, cancel := context.WithTimeout(context.Background(), testkit.WorkerDeadline)
				defer cancel()
				stopped.Go(func() { stopErr = w.Stop(stopCtx) })
			} else {
				endRun()
			}
			// The held runs go back before the running handler returns.
			events.WaitWritten(t, "stop", held...)
			close(h.release)
			if graceful {
				events.WaitWritten(t, "complete", running)
			}
			stopped.Wait()
			if stopErr != nil {
				t.Fatalf("stop: %v", stopErr)
			}
			if err := <-runResult; err != nil {
				t.Fatalf("run: %v", err)
			}

			// The running run is the only one any handler saw.
			h.counter.ExpectEach(t, []string{running}, 1)
			for _, id := range held {
				r := rs.Row(id)
				if r.Status != "running" || r.Token != nil || r.AdmittedAt == nil || r.Attempts != 0 {
					t.Errorf("held %s after the stop: %+v, want running, unclaimed, admission kept, no claim attempt counted", id, r)
				}
				if r.WakeAt == nil || r.WakeAt.After(rs.DbNow()) {
					t.Errorf("held %s wakes at %v, want due now", id, r.WakeAt)
				}
			}
		})
	}
}

// TestWorkerCancelOfARunHeldAhead cancels a run a worker holds ahead of
// its one busy handler: the revocation reaches the held job through the
// worker's LISTEN session, its handler never starts, and its hand-back is
// refused as cancelled, so the run stays cancelled while the running
// handler goes on to complete.
func TestWorkerCancelOfARunHeldAhead(t *testing.T) {
	t.Parallel()
	a := startAhead(t, []string{"a", "b"}, 1)
	held := a.held[0]

	res, err := a.rs.Client.Cancel(testkit.Context(t), docket.Tenant("t"), held)
	if err != nil || !res.Changed || res.Run.Status != docket.StatusCancelled {
		t.Fatalf("Cancel %s: %+v, %v", held, res, err)
	}
	var handedBack docket.WorkerEvent
	a.events.WaitFor(t, "the held run's hand-back", func(evs []docket.WorkerEvent) bool {
		for _, ev := range evs {
			if ev.Kind == docket.EventVerdict && ev.RunID == held {
				handedBack = ev
				return true
			}
		}
		return false
	})
	if handedBack.Verdict != "stop" || handedBack.Outcome != docket.VerdictCancelled {
		t.Fatalf("held run's verdict %s %s, want a stop refused as cancelled", handedBack.Verdict, handedBack.Outcome)
	}

	close(a.h.release)
	a.events.WaitWritten(t, "complete", a.running)
	testkit.StopWorker(t, a.w, a.result)

	a.h.counter.ExpectEach(t, []string{a.running}, 1)
	if r := a.rs.Row(held); r.Status != "cancelled" || r.Token != nil {
		t.Errorf("held %s: %+v, want cancelled and unclaimed", held, r)
	}
	if r := a.rs.Row(a.running); r.Status != "done" {
		t.Errorf("running %s: %+v, want done", a.running, r)
	}
}

package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// plan is a test Plan: its verdict is its kind.
type plan = Plan[string]

var (
	verdict    = plan{Verdict: "complete", Shared: true, Releases: true}
	yield      = plan{Verdict: "yield", Shared: true, Releases: true, Yields: true}
	alone      = plan{Verdict: "retry", Releases: true}
	keep       = plan{Verdict: "checkpoint"}
	errFenced  = errors.New("fenced")
	errCancel  = errors.New("cancelled")
	errBad     = errors.New("invalid")
	errLost    = errors.New("connection lost")
	errGone    = errors.New("not held")
	errFence   = errors.New("fenced out cause")
	errTimeout = errors.New("timed out")
)

// fake is the Store, Work and Reporter of one test job. Each write method
// answers with the next error of its queue (nil once the queue is empty)
// and records what it was asked, as "method kind seq".
type fake struct {
	t                            *testing.T
	commit, grouped, tx, release []error
	applied                      []bool
	calls                        []string
	endings                      []string
	sleeps                       int
	sleepOK                      bool
	// deadlines are the deadlines of the contexts Commit was given.
	deadlines []time.Time
	// carried is the batch of the write in progress.
	carried int
	// released and handBackErr are the last hand-back's.
	released    bool
	handBackErr error
	// The Work of Run: the handler's call.
	handle func(context.Context) (plan, error)
}

func (f *fake) next(q *[]error) error {
	if len(*q) == 0 {
		return nil
	}
	err := (*q)[0]
	*q = (*q)[1:]
	return err
}

func (f *fake) Commit(ctx context.Context, fe Fence, p plan) (Fence, error) {
	f.calls = append(f.calls, fmt.Sprintf("commit %s %d", p.Verdict, fe.Seq))
	deadline, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, deadline)
	return Fence{Seq: fe.Seq + 1, Step: fe.Step, State: []byte(p.Verdict)}, f.next(&f.commit)
}

func (f *fake) CommitGrouped(_ context.Context, fe Fence, p plan) (Fence, int, error) {
	if !p.Shared {
		f.t.Errorf("CommitGrouped of %s, which may not share a statement", p.Verdict)
	}
	f.calls = append(f.calls, fmt.Sprintf("grouped %s %d", p.Verdict, fe.Seq))
	return Fence{Seq: fe.Seq + 1, Step: fe.Step}, 3, f.next(&f.grouped)
}

func (f *fake) CommitTx(_ context.Context, _ pgx.Tx, fe Fence, p plan) error {
	f.calls = append(f.calls, fmt.Sprintf("tx %s %d", p.Verdict, fe.Seq))
	return f.next(&f.tx)
}

func (f *fake) Applied(_ context.Context, fe Fence, p plan) (bool, error) {
	f.calls = append(f.calls, fmt.Sprintf("applied %s %d", p.Verdict, fe.Seq))
	if len(f.applied) == 0 {
		return false, nil
	}
	a := f.applied[0]
	f.applied = f.applied[1:]
	return a, nil
}

func (f *fake) Release(context.Context) (bool, error) {
	f.calls = append(f.calls, "release")
	return true, f.next(&f.release)
}

func (f *fake) Refresh(context.Context) error { return nil }

func (f *fake) Answer(err error) Answer {
	switch {
	case errors.Is(err, errCancel):
		return Cancelled
	case errors.Is(err, errFenced):
		return Fenced
	case errors.Is(err, errBad):
		return Invalid
	case errors.Is(err, errGone):
		return Lost
	}
	return Unanswered
}

func (f *fake) Handle(ctx context.Context) (plan, error) { return f.handle(ctx) }

func (f *fake) Panicked(_ context.Context, value any) (plan, error) {
	f.endings = append(f.endings, fmt.Sprintf("panicked %v", value))
	return plan{Verdict: "panic", Shared: true, Releases: true}, fmt.Errorf("panic: %v", value)
}

func (f *fake) Refused(int, error) plan {
	return plan{Verdict: "invalid_result", Shared: true, Releases: true}
}
func (f *fake) Stopped(int) plan { return plan{Verdict: "stop", Releases: true, Yields: true} }

// Report records the events the tests look at, as the endings of writes
// ("end kind ending carried err"), hand-backs and the rest.
func (f *fake) Report(ctx context.Context, e Event[string]) context.Context {
	switch e.Kind {
	case HandlerStarted, HandlerEnded:
		f.endings = append(f.endings, fmt.Sprintf("handler %d %s %v", e.Kind, e.Plan.Verdict, e.Err))
	case Writing:
		f.carried = 0
	case Carried:
		f.carried = e.Batch
	case Wrote:
		f.endings = append(f.endings, fmt.Sprintf("end %s %d %d %v", e.Plan.Verdict, e.Ending, f.carried, e.Err))
	case Staged:
		f.endings = append(f.endings, "staged "+e.Plan.Verdict)
	case HandedBack:
		f.released, f.handBackErr = e.Released, e.Err
		if e.Checkpointed {
			f.endings = append(f.endings, fmt.Sprintf("verdict %s %v", e.Plan.Verdict, e.Err))
		}
	case Yielded:
		f.endings = append(f.endings, "yielded")
	case Failed:
		f.endings = append(f.endings, "failure "+e.Msg)
	}
	return ctx
}

// newJob returns a prepared job on f whose claim expects sequence 7, and
// the handler's context.
func newJob(t *testing.T, f *fake, ttl time.Duration) (*Job[string], context.Context) {
	t.Helper()
	f.t = t
	ctx, cancel := context.WithCancelCause(context.Background())
	j := &Job[string]{Config: Config[string]{
		Store: f, Work: f, Reporter: f, HeartbeatInterval: time.Hour, ClaimTTL: ttl, CallTimeout: time.Minute,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Sleep:   func(context.Context, time.Duration) bool { f.sleeps++; return f.sleepOK },
		NotHeld: errGone, FencedOut: errFence,
	}, Fence: Fence{Seq: 7, Step: 2}, ClaimedAt: time.Now(), EndHandler: cancel}
	j.held.Confirm(j.ClaimedAt)
	if !j.prepare(context.Background()) {
		t.Fatal("Prepare refused a fresh job")
	}
	return j, ctx
}

func expect(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// A Shared verdict joins the group commit; one that yields tells the
// domain's workers after its write ended.
func TestSettleGroupsAVerdict(t *testing.T) {
	f := &fake{}
	j, _ := newJob(t, f, time.Minute)
	j.settle(context.Background(), yield)
	expect(t, "calls", f.calls, []string{"grouped yield 7"})
	expect(t, "endings", f.endings, []string{"end yield 1 3 <nil>", "yielded"})
	if _, err := j.Checkpoint(context.Background(), keep); !errors.Is(err, errGone) {
		t.Fatalf("a checkpoint after the claim ended: %v, want NotHeld", err)
	}
}

// A group statement that failed as a whole is written again alone; when
// that answer is lost too and the next try is fenced, the store is asked
// whether the lost attempt committed.
func TestSettleFindsAnEarlierAttemptApplied(t *testing.T) {
	f := &fake{grouped: []error{fmt.Errorf("%w: boom", jobcompleter.ErrFlushFailed), errFenced},
		commit: []error{errLost}, applied: []bool{true}, sleepOK: true}
	j, _ := newJob(t, f, time.Minute)
	j.settle(context.Background(), verdict)
	expect(t, "calls", f.calls, []string{"grouped complete 7", "commit complete 7", "grouped complete 7", "applied complete 7"})
	expect(t, "endings", f.endings, []string{"end complete 2 3 <nil>"})
	if f.sleeps != 1 {
		t.Fatalf("%d backoffs, want 1", f.sleeps)
	}
}

// A fence refusal without an uncertain attempt ends the claim: the
// handler's context ends with FencedOut and nothing more is written.
func TestSettleFencedOut(t *testing.T) {
	f := &fake{commit: []error{errFenced}}
	j, ctx := newJob(t, f, time.Minute)
	j.settle(context.Background(), alone)
	expect(t, "calls", f.calls, []string{"commit retry 7"})
	expect(t, "endings", f.endings, []string{"end retry 5 1 fenced"})
	if !errors.Is(context.Cause(ctx), errFence) {
		t.Fatalf("handler context cause %v, want FencedOut", context.Cause(ctx))
	}
	if j.Surrender() {
		t.Fatal("Surrender after the fence reports the claim held")
	}
}

// An operator's cancel is its own ending.
func TestSettleCancelledByOperator(t *testing.T) {
	f := &fake{grouped: []error{errCancel}}
	j, _ := newJob(t, f, time.Minute)
	j.settle(context.Background(), verdict)
	expect(t, "endings", f.endings, []string{"end complete 4 3 cancelled"})
}

// A verdict the store refuses as invalid is replaced by the Refused plan,
// which is written next and never replaced again: refused too, it is
// retried like any failed write (here the wait is interrupted).
func TestSettleReplacesARefusedVerdict(t *testing.T) {
	f := &fake{grouped: []error{errBad, errBad}}
	j, _ := newJob(t, f, time.Minute)
	j.settle(context.Background(), verdict)
	expect(t, "calls", f.calls, []string{"grouped complete 7", "grouped invalid_result 7"})
	expect(t, "endings", f.endings, []string{"end complete 6 3 invalid", "end invalid_result 8 3 invalid"})
}

// Writes that keep failing without an answer are retried until the claim
// TTL passed since the claim was last known held, or the context ends; no
// write is sent once the claim may have expired, and none waits past that.
func TestSettleGivesUpOrIsInterrupted(t *testing.T) {
	f := &fake{commit: []error{errLost}}
	j, _ := newJob(t, f, 0)
	j.settle(context.Background(), alone)
	expect(t, "calls", f.calls, nil)
	expect(t, "endings", f.endings, []string{"end retry 3 0 not held: the claim may have expired, so no verdict write was sent"})

	// Known held 40 s ago with a TTL of a minute: the write may wait 20 s,
	// not the minute of the call timeout; a retry after the expiry is not
	// sent.
	f = &fake{commit: []error{errLost}, sleepOK: true}
	j, _ = newJob(t, f, time.Minute)
	known := time.Now().Add(-40 * time.Second)
	j.held.Confirm(known)
	j.settle(context.Background(), alone)
	if len(f.deadlines) == 0 || !f.deadlines[0].Equal(known.Add(time.Minute)) {
		t.Fatalf("the write's deadline %v, want the claim's expiry %v", f.deadlines, known.Add(time.Minute))
	}
	if len(f.calls) != 2 || f.calls[0] != "commit retry 7" {
		t.Fatalf("calls %q, want the write and its retry while the claim may be held", f.calls)
	}

	f = &fake{commit: []error{errLost}, sleepOK: false}
	j, _ = newJob(t, f, time.Minute)
	j.settle(context.Background(), alone)
	expect(t, "endings", f.endings, []string{"end retry 8 1 connection lost"})
}

// A surrendered claim drops the verdict; HandBack writes the Stopped plan
// once the handler had started, and only releases before that.
func TestSurrenderAndHandBack(t *testing.T) {
	f := &fake{}
	j, _ := newJob(t, f, time.Minute)
	if !j.Surrender() || j.Surrender() {
		t.Fatal("Surrender reports the claim held exactly once")
	}
	j.settle(context.Background(), verdict)
	if j.HandBack(context.Background()); !f.released || f.handBackErr != nil {
		t.Fatalf("HandBack = %v, %v", f.released, f.handBackErr)
	}
	expect(t, "calls", f.calls, []string{"commit stop 7"})
	expect(t, "endings", f.endings, []string{"end complete 3 0 not held", "verdict stop <nil>"})

	f = &fake{}
	_, cancel := context.WithCancelCause(context.Background())
	j = &Job[string]{Config: Config[string]{Store: f, Work: f, Reporter: f, CallTimeout: time.Minute, NotHeld: errGone},
		Fence: Fence{Seq: 1}, ClaimedAt: time.Now(), EndHandler: cancel}
	j.Surrender()
	if j.HandBack(context.Background()); !f.released || f.handBackErr != nil {
		t.Fatalf("HandBack before Prepare = %v, %v", f.released, f.handBackErr)
	}
	expect(t, "calls before Prepare", f.calls, []string{"release"})
}

// A failed read hands the claim back without a checkpoint.
func TestPrepareReleasesAnUnreadableRun(t *testing.T) {
	f := &fake{}
	_, cancel := context.WithCancelCause(context.Background())
	j := &Job[string]{Config: Config[string]{Store: f, Work: f, Reporter: f, CallTimeout: time.Minute, NotHeld: errGone,
		Unreadable: errors.New("no row")}, Fence: Fence{Seq: 1}, ClaimedAt: time.Now(), EndHandler: cancel}
	if j.prepare(context.Background()) {
		t.Fatal("Prepare accepted a failed read")
	}
	expect(t, "calls", f.calls, []string{"release"})
	expect(t, "endings", f.endings, []string{"failure docket worker could not read a claimed run"})
}

// A verdict written in the handler's transaction settles the job when the
// run shows it, and the returned verdict is settled when it does not; a
// second CommitTx stages nothing.
func TestCommitTxStagesOneVerdict(t *testing.T) {
	stage := func(int) plan { return verdict }
	f := &fake{applied: []bool{true}}
	j, _ := newJob(t, f, time.Minute)
	if err := j.CommitTx(context.Background(), nil, stage); err != nil {
		t.Fatal(err)
	}
	if err := j.CommitTx(context.Background(), nil, stage); !errors.Is(err, ErrStaged) {
		t.Fatalf("second CommitTx: %v, want ErrStaged", err)
	}
	j.settleStaged(context.Background(), alone)
	expect(t, "calls", f.calls, []string{"tx complete 7", "applied complete 7"})
	expect(t, "endings", f.endings, []string{"staged complete"})

	f = &fake{}
	j, _ = newJob(t, f, time.Minute)
	if err := j.CommitTx(context.Background(), nil, stage); err != nil {
		t.Fatal(err)
	}
	j.settleStaged(context.Background(), alone)
	expect(t, "calls after a rollback", f.calls, []string{"tx complete 7", "applied complete 7", "commit retry 7"})
}

// A checkpoint keeps the claim and moves the fence.
func TestCheckpointMovesTheFence(t *testing.T) {
	f := &fake{}
	j, _ := newJob(t, f, time.Minute)
	got, err := j.Checkpoint(context.Background(), keep)
	if err != nil || got.Seq != 8 || string(got.State) != "checkpoint" {
		t.Fatalf("Checkpoint = %+v, %v", got, err)
	}
	j.settle(context.Background(), verdict)
	expect(t, "calls", f.calls, []string{"commit checkpoint 7", "grouped complete 8"})
}

// newRunJob returns a job on f that Run has not begun, whose claim expects
// sequence 7 at step 2 (unreadable, the error of the run's read), under the
// handler timeout timeout, and the handler's context. The job has one
// handler slot, none when noSlot, and counts among the unstarted jobs.
func newRunJob(t *testing.T, f *fake, unreadable error, timeout time.Duration, noSlot bool) (*Job[string], context.Context) {
	t.Helper()
	f.t = t
	ctx, cancel := context.WithCancelCause(context.Background())
	slots := Slots{Handlers: make(chan struct{}, 1), Stop: make(chan struct{}), Unstarted: &sync.WaitGroup{}}
	if noSlot {
		stop := make(chan struct{})
		close(stop)
		slots.Handlers, slots.Stop = make(chan struct{}), stop
	}
	slots.Unstarted.Add(1)
	return &Job[string]{Config: Config[string]{
		Store: f, Work: f, Slots: slots, Reporter: f, HeartbeatInterval: time.Hour, ClaimTTL: time.Minute,
		CallTimeout: time.Minute, Timeout: timeout, TimedOut: errTimeout,
		Backoff: func(int) time.Duration { return time.Millisecond },
		Sleep:   func(context.Context, time.Duration) bool { return false },
		NotHeld: errGone, FencedOut: errFence, Unreadable: unreadable,
	}, Fence: Fence{Seq: 7, Step: 2}, ClaimedAt: time.Now(), EndHandler: cancel}, ctx
}

// expectSlotsFree fails unless j's handler slot is free again and j left
// the unstarted jobs.
func expectSlotsFree(t *testing.T, j *Job[string]) {
	t.Helper()
	if n := len(j.Config.Slots.Handlers); n != 0 {
		t.Fatalf("%d handler slots still taken after Run", n)
	}
	j.Config.Slots.Unstarted.Wait()
}

// Run reads the run, takes a slot, calls the handler and settles its
// verdict, giving the slot back once the handler returned.
func TestRunCallsTheHandlerAndSettles(t *testing.T) {
	f := &fake{handle: func(context.Context) (plan, error) { return verdict, nil }}
	j, ctx := newRunJob(t, f, nil, 0, false)
	j.Run(ctx, context.Background())
	expectSlotsFree(t, j)
	expect(t, "calls", f.calls, []string{"grouped complete 7"})
	expect(t, "endings", f.endings, []string{"handler 1  <nil>", "handler 2 complete <nil>", "end complete 1 3 <nil>"})
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("the handler's context after Run: %v, want cancelled", ctx.Err())
	}
}

// A handler's panic is recovered at the step it reached and planned by
// Panicked; the verdict is settled like any other.
func TestRunRecoversAPanic(t *testing.T) {
	f := &fake{handle: func(context.Context) (plan, error) { panic("boom") }}
	j, ctx := newRunJob(t, f, nil, 0, false)
	j.Run(ctx, context.Background())
	expect(t, "endings", f.endings, []string{"handler 1  <nil>", "panicked boom", "handler 2 panic panic: boom", "end panic 1 3 <nil>"})
	expectSlotsFree(t, j)
}

// The handler's context ends with the timeout's cause once it passed.
func TestRunTimesOutTheHandler(t *testing.T) {
	f := &fake{handle: func(ctx context.Context) (plan, error) {
		<-ctx.Done()
		return alone, context.Cause(ctx)
	}}
	j, ctx := newRunJob(t, f, nil, time.Nanosecond, false)
	j.Run(ctx, context.Background())
	expect(t, "endings", f.endings, []string{"handler 1  <nil>", "handler 2 retry timed out", "end retry 1 1 <nil>"})
}

// A job that gets no handler slot hands its claim back with the Stopped
// plan without calling the handler; one whose read failed releases it.
func TestRunHandsBackWithoutASlot(t *testing.T) {
	f := &fake{handle: func(context.Context) (plan, error) {
		t.Error("the handler was called without a slot")
		return verdict, nil
	}}
	j, ctx := newRunJob(t, f, nil, 0, true)
	j.Run(ctx, context.Background())
	j.Config.Slots.Unstarted.Wait()
	expect(t, "calls", f.calls, []string{"commit stop 7"})
	expect(t, "endings", f.endings, []string{"verdict stop <nil>"})
	if !f.released || f.handBackErr != nil {
		t.Fatalf("hand-back = %v, %v; want released", f.released, f.handBackErr)
	}

	f = &fake{}
	j, ctx = newRunJob(t, f, errors.New("no row"), 0, false)
	j.Run(ctx, context.Background())
	expectSlotsFree(t, j)
	expect(t, "calls after a failed read", f.calls, []string{"release"})
	expect(t, "endings after a failed read", f.endings, []string{"failure docket worker could not read a claimed run"})
}

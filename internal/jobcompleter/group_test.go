package jobcompleter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a flush that records its batches and answers each item with
// the item times ten; block, when set, holds each flush until it receives.
type recorder struct {
	mu      sync.Mutex
	batches [][]int
	ctxErrs []error
	called  chan struct{}
	block   chan struct{}
	fail    error
}

func newRecorder() *recorder { return &recorder{called: make(chan struct{}, 16)} }

func (r *recorder) flush(ctx context.Context, items []int) ([]Result[int], error) {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(items))
	r.ctxErrs = append(r.ctxErrs, ctx.Err())
	r.mu.Unlock()
	r.called <- struct{}{}
	if r.block != nil {
		<-r.block
	}
	if r.fail != nil {
		return nil, r.fail
	}
	out := make([]Result[int], len(items))
	for i, it := range items {
		out[i].Value = it * 10
		if it < 0 {
			out[i].Err = fmt.Errorf("item %d refused", it)
		}
	}
	return out, nil
}

func (r *recorder) recorded() [][]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// neverTimer is a Timer that never fires; started counts its timers.
type neverTimer struct{ started chan time.Duration }

func newNeverTimer() *neverTimer { return &neverTimer{started: make(chan time.Duration, 16)} }

func (n *neverTimer) timer(d time.Duration) (<-chan time.Time, func()) {
	n.started <- d
	return make(chan time.Time), func() {}
}

// never and always are Complete's prompt answers.
func never() bool  { return false }
func always() bool { return true }

// outcome is what one Write returned.
type outcome struct {
	res  Result[int]
	size int
}

// writeAsync runs g.Write in a goroutine and returns where its outcome
// arrives.
func writeAsync(ctx context.Context, g *Completer[int, int], m *Member, item int) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		res, size := g.write(ctx, m, item, never)
		out <- outcome{res, size}
	}()
	return out
}

// assertIdle fails unless g has no leader and nothing queued.
func assertIdle(t *testing.T, g *Completer[int, int]) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.leading || len(g.pending) != 0 {
		t.Fatalf("group not idle: leading %v, %d pending", g.leading, len(g.pending))
	}
}

// A cohort's writes share one batch: the leader waits for every member.
func TestCohortWritesShareOneBatch(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := byCohort(rec.flush, 0, time.Hour, timer.timer)
	var cohort Cohort
	members := []*Member{g.Join(&cohort), g.Join(&cohort), g.Join(&cohort)}
	var outs []<-chan outcome
	for i, m := range members {
		outs = append(outs, writeAsync(t.Context(), g, m, i+1))
	}
	for i, out := range outs {
		got := <-out
		if got.res.Err != nil || got.res.Value != (i+1)*10 || got.size != 3 {
			t.Fatalf("write %d: got %+v, want value %d, size 3", i+1, got, (i+1)*10)
		}
	}
	batches := rec.recorded()
	if len(batches) != 1 || len(batches[0]) != 3 {
		t.Fatalf("batches %v, want one batch of 3", batches)
	}
	assertIdle(t, g)
}

// A lone writer whose cohort awaits nobody else flushes at once, without a
// timer.
func TestLoneWriteFlushesAtOnce(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := byCohort(rec.flush, 0, time.Hour, timer.timer)
	var cohort Cohort
	res, size := g.write(t.Context(), g.Join(&cohort), 7, never)
	if res.Err != nil || res.Value != 70 || size != 1 {
		t.Fatalf("got %+v size %d, want 70 size 1", res, size)
	}
	if len(timer.started) != 0 {
		t.Fatalf("a lone write started a timer")
	}
	assertIdle(t, g)
}

// Writes that arrive during a flush form the next batch in arrival order,
// led by the oldest of them.
func TestWritesQueuedDuringFlushKeepTheirOrder(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	g := byCohort(rec.flush, 0, time.Hour, newNeverTimer().timer)
	var first, rest Cohort
	lead := writeAsync(t.Context(), g, g.Join(&first), 1)
	<-rec.called
	// The leader is in its flush: each signal on changed is now one
	// queued write.
	<-g.changed
	members := []*Member{g.Join(&rest), g.Join(&rest), g.Join(&rest)}
	var outs []<-chan outcome
	for i, m := range members {
		outs = append(outs, writeAsync(t.Context(), g, m, i+2))
		<-g.changed
	}
	rec.block <- struct{}{}
	if got := <-lead; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("leader got %+v", got)
	}
	<-rec.called
	rec.block <- struct{}{}
	for i, out := range outs {
		if got := <-out; got.res.Err != nil || got.res.Value != (i+2)*10 || got.size != 3 {
			t.Fatalf("write %d got %+v", i+2, got)
		}
	}
	want := [][]int{{1}, {2, 3, 4}}
	if got := rec.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	assertIdle(t, g)
}

// Each write gets its own item's result out of a shared batch.
func TestEachWriteGetsItsOwnResult(t *testing.T) {
	rec := newRecorder()
	g := byCohort(rec.flush, 0, time.Hour, newNeverTimer().timer)
	var cohort Cohort
	a, b := g.Join(&cohort), g.Join(&cohort)
	outA := writeAsync(t.Context(), g, a, 5)
	outB := writeAsync(t.Context(), g, b, -2)
	gotA, gotB := <-outA, <-outB
	if gotA.res.Err != nil || gotA.res.Value != 50 || gotA.size != 2 {
		t.Fatalf("write 5 got %+v", gotA)
	}
	if gotB.res.Err == nil || gotB.res.Err.Error() != "item -2 refused" || errors.Is(gotB.res.Err, ErrFlushFailed) || gotB.size != 2 {
		t.Fatalf("write -2 got %+v, want its own refusal", gotB)
	}
}

// A flush that fails as a whole fails every write of its batch with
// ErrFlushFailed wrapping the cause, and the group goes on.
func TestFailedFlushFailsEveryWrite(t *testing.T) {
	cause := errors.New("connection reset")
	rec := newRecorder()
	rec.fail = cause
	g := byCohort(rec.flush, 0, time.Hour, newNeverTimer().timer)
	var cohort Cohort
	a, b := g.Join(&cohort), g.Join(&cohort)
	outA, outB := writeAsync(t.Context(), g, a, 1), writeAsync(t.Context(), g, b, 2)
	for _, out := range []<-chan outcome{outA, outB} {
		got := <-out
		if !errors.Is(got.res.Err, ErrFlushFailed) || !errors.Is(got.res.Err, cause) || got.size != 2 {
			t.Fatalf("got %+v, want ErrFlushFailed wrapping the cause", got)
		}
	}
	rec.fail = nil
	var next Cohort
	if res, _ := g.write(t.Context(), g.Join(&next), 3, never); res.Err != nil || res.Value != 30 {
		t.Fatalf("write after a failed flush got %+v", res)
	}
}

// A flush that answers the wrong number of results fails the batch.
func TestFlushWithWrongResultCountFails(t *testing.T) {
	g := byCohort(func(context.Context, []int) ([]Result[int], error) { return nil, nil }, 0, time.Hour, nil)
	var cohort Cohort
	res, size := g.write(t.Context(), g.Join(&cohort), 1, never)
	if !errors.Is(res.Err, ErrFlushFailed) || res.Err.Error() != "jobcompleter: statement failed: the flush returned 0 results for 1 items" || size != 1 {
		t.Fatalf("got %v size %d", res.Err, size)
	}
}

// The leader waits for the rest of its cohort no longer than the group's
// wait; the late member then leads a batch of its own.
func TestLeaderStopsWaitingWhenTheWaitPasses(t *testing.T) {
	rec := newRecorder()
	fire := make(chan time.Time, 1)
	var asked time.Duration
	timer := func(d time.Duration) (<-chan time.Time, func()) { asked = d; return fire, func() {} }
	g := byCohort(rec.flush, 0, 200*time.Microsecond, timer)
	var cohort Cohort
	lead, late := g.Join(&cohort), g.Join(&cohort)
	out := writeAsync(t.Context(), g, lead, 1)
	fire <- time.Time{}
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("leader got %+v", got)
	}
	if asked != 200*time.Microsecond {
		t.Fatalf("timer asked for %v", asked)
	}
	if res, size := g.write(t.Context(), late, 2, never); res.Value != 20 || size != 1 {
		t.Fatalf("late write got %+v size %d", res, size)
	}
	if got, want := rec.recorded(), [][]int{{1}, {2}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// Members that settle without writing, as the jobs of a stopping worker
// do, release the waiting leader at once, and leave the group idle.
func TestSettledMembersReleaseTheLeader(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := byCohort(rec.flush, 0, time.Hour, timer.timer)
	var cohort Cohort
	lead, gone1, gone2 := g.Join(&cohort), g.Join(&cohort), g.Join(&cohort)
	out := writeAsync(t.Context(), g, lead, 1)
	<-timer.started
	g.Settle(gone1)
	g.Settle(gone2)
	g.Settle(gone2) // settling twice counts once
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("leader got %+v", got)
	}
	assertIdle(t, g)
	if cohort.awaiting != 0 {
		t.Fatalf("cohort still awaits %d", cohort.awaiting)
	}
}

// A queued write whose context ends leaves the queue unwritten; the leader
// then gives the lead up.
func TestCancelledQueuedWriteLeaves(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	g := byCohort(rec.flush, 0, time.Hour, newNeverTimer().timer)
	var a, b Cohort
	lead := writeAsync(t.Context(), g, g.Join(&a), 1)
	<-rec.called
	<-g.changed
	ctx, cancel := context.WithCancel(t.Context())
	queued := writeAsync(ctx, g, g.Join(&b), 2)
	<-g.changed
	cancel()
	if got := <-queued; !errors.Is(got.res.Err, context.Canceled) || got.size != 0 {
		t.Fatalf("cancelled write got %+v", got)
	}
	rec.block <- struct{}{}
	<-lead
	assertIdle(t, g)
	if got, want := rec.recorded(), [][]int{{1}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// A write whose context already ended writes nothing and stops being
// awaited.
func TestWriteWithEndedContextWritesNothing(t *testing.T) {
	rec := newRecorder()
	g := byCohort(rec.flush, 0, time.Hour, newNeverTimer().timer)
	var cohort Cohort
	m := g.Join(&cohort)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if res, size := g.write(ctx, m, 1, never); !errors.Is(res.Err, context.Canceled) || size != 0 {
		t.Fatalf("got %+v size %d", res, size)
	}
	if len(rec.recorded()) != 0 || cohort.awaiting != 0 {
		t.Fatalf("batches %v, awaiting %d", rec.recorded(), cohort.awaiting)
	}
	assertIdle(t, g)
}

// A leader whose context ends stops waiting for its cohort and flushes
// with that context, which the flush sees ended.
func TestCancelledLeaderStopsWaiting(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := byCohort(rec.flush, 0, time.Hour, timer.timer)
	var cohort Cohort
	lead := g.Join(&cohort)
	g.Join(&cohort) // never writes
	ctx, cancel := context.WithCancel(t.Context())
	out := writeAsync(ctx, g, lead, 1)
	<-timer.started
	cancel()
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("leader got %+v", got)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ctxErrs) != 1 || !errors.Is(rec.ctxErrs[0], context.Canceled) {
		t.Fatalf("flush saw %v", rec.ctxErrs)
	}
}

// A lingering leader waits its whole linger even when its own cohort has
// nobody left to wait for (a group made by New flushes such a write at
// once), and flushes when the linger passes.
func TestLingeringLeaderWaitsTheWholeLinger(t *testing.T) {
	rec := newRecorder()
	fire := make(chan time.Time, 1)
	asked := make(chan time.Duration, 1)
	timer := func(d time.Duration) (<-chan time.Time, func()) { asked <- d; return fire, func() {} }
	g := lingering(rec.flush, 0, 20*time.Millisecond, 8, timer)
	var cohort Cohort
	out := writeAsync(t.Context(), g, g.Join(&cohort), 1)
	if d := <-asked; d != 20*time.Millisecond {
		t.Fatalf("timer asked for %v, want the linger", d)
	}
	if got := rec.recorded(); len(got) != 0 {
		t.Fatalf("flushed %v before the linger passed", got)
	}
	fire <- time.Time{}
	if got := <-out; got.res.Err != nil || got.res.Value != 10 || got.size != 1 {
		t.Fatalf("got %+v, want value 10, size 1", got)
	}
	assertIdle(t, g)
}

// A lingering leader waits for writes of other cohorts, and a batch that
// fills up is flushed before its linger passed.
func TestLingeringBatchTakesEveryCohortAndFlushesWhenFull(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := lingering(rec.flush, 0, time.Hour, 3, timer.timer)
	var outs []<-chan outcome
	for i := 1; i <= 3; i++ {
		var cohort Cohort
		outs = append(outs, writeAsync(t.Context(), g, g.Join(&cohort), i))
		if i == 1 {
			<-timer.started
		}
	}
	for i, out := range outs {
		if got := <-out; got.res.Value != (i+1)*10 || got.size != 3 {
			t.Fatalf("write %d: got %+v, want value %d, size 3", i+1, got, (i+1)*10)
		}
	}
	// Writes 2 and 3 queue in whichever order their goroutines ran.
	batches := rec.recorded()
	if len(batches) != 1 || batches[0][0] != 1 || !slices.Equal(slices.Sorted(slices.Values(batches[0])), []int{1, 2, 3}) {
		t.Fatalf("batches %v, want one batch of 1, 2 and 3 led by 1", batches)
	}
	assertIdle(t, g)
}

// Hurry ends a leader's lingering at once, and no later leader lingers.
func TestHurryEndsLingering(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := lingering(rec.flush, 0, time.Hour, 100, timer.timer)
	var cohort Cohort
	out := writeAsync(t.Context(), g, g.Join(&cohort), 1)
	<-timer.started
	g.Hurry()
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("hurried leader got %+v", got)
	}
	if res, size := g.write(t.Context(), g.Join(&cohort), 2, never); res.Value != 20 || size != 1 {
		t.Fatalf("write after Hurry got %+v size %d", res, size)
	}
	if len(timer.started) != 0 {
		t.Fatalf("a leader lingered after Hurry")
	}
	if got, want := rec.recorded(), [][]int{{1}, {2}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// manualClock is a clock the test moves; reads receives once per reading.
type manualClock struct {
	mu    sync.Mutex
	t     time.Time
	reads chan struct{}
}

func newManualClock() *manualClock {
	return &manualClock{t: time.Unix(1000, 0), reads: make(chan struct{}, 64)}
}

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads <- struct{}{}
	return c.t
}

// skipReads consumes n readings of c.
func (c *manualClock) skipReads(n int) {
	for range n {
		<-c.reads
	}
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// An adaptive leader lingers once writes arrived closer together than its
// linger (here as long as a flush takes, at most 4 ms), and takes the
// writes of other cohorts meanwhile.
func TestAdaptiveLeaderLingersWhileWritesArriveFasterThanAFlush(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	clock := newManualClock()
	fire := make(chan time.Time, 1)
	asked := make(chan time.Duration, 1)
	timer := func(d time.Duration) (<-chan time.Time, func()) { asked <- d; return fire, func() {} }
	g := adapting(rec.flush, 0, time.Hour, 8, func(flush time.Duration) time.Duration { return min(flush, 4*time.Millisecond) }, timer, clock.now)

	// Nothing measured yet: a lone write leads and flushes at once. The
	// clock is read as each write arrives (under the group's mutex, once
	// it is queued) and as each flush starts and ends.
	var first, second, third Cohort
	out1 := writeAsync(t.Context(), g, g.Join(&first), 1)
	<-rec.called
	clock.skipReads(2)
	// A write of another cohort arrives while that flush takes 5 ms.
	out2 := writeAsync(t.Context(), g, g.Join(&second), 2)
	clock.skipReads(1)
	clock.advance(5 * time.Millisecond)
	rec.block <- struct{}{}
	if got := <-out1; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("first write got %+v", got)
	}
	// Its leader lingers 4 ms: the gap (none) is below that.
	if d := <-asked; d != 4*time.Millisecond {
		t.Fatalf("linger %v, want 4ms", d)
	}
	out3 := writeAsync(t.Context(), g, g.Join(&third), 3)
	clock.skipReads(2) // the first flush's end, the third write's arrival
	fire <- time.Time{}
	<-rec.called
	rec.block <- struct{}{}
	for i, out := range []<-chan outcome{out2, out3} {
		if got := <-out; got.res.Value != (i+2)*10 || got.size != 2 {
			t.Fatalf("write %d got %+v, want size 2", i+2, got)
		}
	}
	if got, want := rec.recorded(), [][]int{{1}, {2, 3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	assertIdle(t, g)
}

// Writes that arrive farther apart than the linger (here as long as a
// flush takes) are written at once: an adaptive leader lingers only when
// another write is likely to come.
func TestAdaptiveLeaderDoesNotLingerForSparseWrites(t *testing.T) {
	rec := newRecorder()
	clock := newManualClock()
	timer := newNeverTimer()
	flush := func(ctx context.Context, items []int) ([]Result[int], error) {
		clock.advance(time.Millisecond)
		return rec.flush(ctx, items)
	}
	g := adapting(flush, 0, time.Hour, 8, func(flush time.Duration) time.Duration { return flush }, timer.timer, clock.now)
	for i := 1; i <= 3; i++ {
		var cohort Cohort
		if res, size := g.write(t.Context(), g.Join(&cohort), i, never); res.Value != i*10 || size != 1 {
			t.Fatalf("write %d got %+v size %d", i, res, size)
		}
		clock.advance(5 * time.Millisecond)
	}
	if len(timer.started) != 0 {
		t.Fatalf("a leader waited although writes came 6 ms apart and a flush took 1 ms")
	}
	if got, want := rec.recorded(), [][]int{{1}, {2}, {3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
}

// A prompt write ends a leader's lingering at once, and a leader that
// leads while one is pending does not linger.
func TestPromptWriteEndsLingering(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := lingering(rec.flush, 0, time.Hour, 100, timer.timer)
	var a, b Cohort
	out := writeAsync(t.Context(), g, g.Join(&a), 1)
	<-timer.started
	if res, size := g.write(t.Context(), g.Join(&b), 2, always); res.Value != 20 || size != 2 {
		t.Fatalf("prompt write got %+v size %d, want 20 in a batch of 2", res, size)
	}
	if got := <-out; got.res.Value != 10 || got.size != 2 {
		t.Fatalf("lingering leader got %+v, want 10 in a batch of 2", got)
	}
	if res, size := g.write(t.Context(), g.Join(&a), 3, always); res.Value != 30 || size != 1 {
		t.Fatalf("prompt leader got %+v size %d", res, size)
	}
	if len(timer.started) != 0 {
		t.Fatalf("a prompt leader lingered")
	}
	if got, want := rec.recorded(), [][]int{{1, 2}, {3}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	// The next leader lingers again.
	out = writeAsync(t.Context(), g, g.Join(&b), 4)
	<-timer.started
	g.Hurry()
	<-out
	assertIdle(t, g)
}

// EndWaits sends the lingering leader's statement at once; without
// pending verdicts it changes nothing.
func TestEndWaitsEndsLingering(t *testing.T) {
	rec := newRecorder()
	timer := newNeverTimer()
	g := lingering(rec.flush, 0, time.Hour, 100, timer.timer)
	g.EndWaits()
	var cohort Cohort
	out := writeAsync(t.Context(), g, g.Join(&cohort), 1)
	<-timer.started
	g.EndWaits()
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("leader got %+v", got)
	}
	out = writeAsync(t.Context(), g, g.Join(&cohort), 2)
	<-timer.started
	g.Hurry()
	<-out
	assertIdle(t, g)
}

// A prompt leader of a lingering completer waits for the rest of its
// cohort at most CohortWait, not the linger.
func TestPromptLeaderWaitsOnlyCohortWait(t *testing.T) {
	rec := newRecorder()
	fire := make(chan time.Time, 1)
	asked := make(chan time.Duration, 1)
	timer := func(d time.Duration) (<-chan time.Time, func()) { asked <- d; return fire, func() {} }
	g := lingering(rec.flush, 0, time.Hour, 100, timer)
	var cohort Cohort
	lead, late := g.Join(&cohort), g.Join(&cohort)
	out := make(chan outcome, 1)
	go func() {
		res, size := g.write(t.Context(), lead, 1, always)
		out <- outcome{res, size}
	}()
	if d := <-asked; d != CohortWait {
		t.Fatalf("a prompt leader waited %v, want CohortWait", d)
	}
	fire <- time.Time{}
	if got := <-out; got.res.Value != 10 || got.size != 1 {
		t.Fatalf("prompt leader got %+v", got)
	}
	g.Settle(late)
	assertIdle(t, g)
}

package docket

import (
	"context"
	"sync"
)

// slots are a Worker's places for its jobs: a claim slot per handler and
// per run it may hold ahead, a handler slot per handler, and the early
// releases of claim slots whose verdict is still being written. Every job
// holds one jobSlot from its claim to its end; the poll loop counts the
// claim slots freed, and a stopping Worker waits on the jobs.
type slots struct {
	// stop is closed when the Worker is asked to stop: a job still waiting
	// for a handler slot then gives up.
	stop <-chan struct{}
	// freed receives one value per freed claim slot; its capacity, the
	// claim slots, means a job never blocks on it.
	freed chan struct{}
	// handlers holds one token per handler running; its capacity,
	// Concurrency, makes a run claimed ahead wait for a handler to return.
	handlers chan struct{}
	// committing holds one token per job whose claim slot was freed while
	// its verdict is still being written; its capacity (committingCapacity)
	// bounds them.
	committing chan struct{}
	// unstarted counts the jobs that have neither taken a handler slot nor
	// given their claim back (jobSlot.Begun), so that a stopping Worker can
	// wait for the hand-backs of jobs that never started.
	unstarted sync.WaitGroup
	// ended receives a value, if none is pending, whenever a job ends.
	ended chan struct{}
	// written receives a value, if none is pending, when a job whose slot
	// was freed early ends: a claim call made in the meantime may have found
	// its run still holding a cap slot, so the poll loop tries again.
	written chan struct{}

	mu sync.Mutex
	// jobs are the jobs holding a slot.
	jobs map[*Job]struct{}
}

// newSlots returns the slots of a Worker of the resolved cfg, whose stop
// closes when it is asked to stop.
func newSlots(cfg WorkerConfig, stop <-chan struct{}) *slots {
	return &slots{
		stop:       stop,
		freed:      make(chan struct{}, cfg.claimSlots()),
		handlers:   make(chan struct{}, cfg.Concurrency),
		committing: make(chan struct{}, cfg.committingCapacity()),
		ended:      make(chan struct{}, 1),
		written:    make(chan struct{}, 1),
		jobs:       make(map[*Job]struct{}),
	}
}

// jobSlot is one job's claim slot, and its handler slot while its handler
// runs; it implements executor.Slot. Only the job goroutine uses it.
type jobSlot struct {
	s *slots
	// early is set once the claim slot was freed ahead of the job's end
	// (releaseEarly).
	early bool
}

// join adds j, a job built but not yet started, whose slot (j.slot) is of
// s; the job counts among the unstarted jobs until it begins.
func (s *slots) join(j *Job) {
	s.unstarted.Add(1)
	s.mu.Lock()
	s.jobs[j] = struct{}{}
	s.mu.Unlock()
}

// end frees the slot of j as j ends: its claim slot, or its committing
// token when the claim slot was freed before.
func (s *slots) end(j *Job) {
	s.mu.Lock()
	delete(s.jobs, j)
	s.mu.Unlock()
	if j.slot.early {
		<-s.committing
		notify(s.written)
	} else {
		s.freed <- struct{}{}
	}
	notify(s.ended)
}

// inFlight returns the jobs holding a slot.
func (s *slots) inFlight() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := make([]*Job, 0, len(s.jobs))
	for j := range s.jobs {
		jobs = append(jobs, j)
	}
	return jobs
}

// takeFreed counts the freed claim slots already signalled without
// waiting.
func (s *slots) takeFreed() int {
	n := 0
	for {
		select {
		case <-s.freed:
			n++
		default:
			return n
		}
	}
}

// awaitIdle waits until no job holds a slot, or ctx or stopCtx ends.
func (s *slots) awaitIdle(ctx, stopCtx context.Context) {
	for len(s.inFlight()) > 0 {
		select {
		case <-s.ended:
		case <-stopCtx.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

// awaitBegun waits until every job has begun: taken a handler slot or
// given its claim back.
func (s *slots) awaitBegun() { s.unstarted.Wait() }

// Take implements executor.Slot: it takes a handler slot for a job that is
// about to call its handler. A job claimed ahead waits for one
// (WorkerTuning.ClaimAhead) until its context ends or the Worker is asked
// to stop: a stopping Worker starts no run it holds ahead.
func (js *jobSlot) Take(ctx context.Context) bool {
	s := js.s
	select {
	case s.handlers <- struct{}{}:
		return true
	default:
	}
	select {
	case s.handlers <- struct{}{}:
	case <-ctx.Done():
		return false
	case <-s.stop:
		return false
	}
	// A slot freed as the Worker stopped may have won the select.
	if ctx.Err() != nil || isClosed(s.stop) {
		<-s.handlers
		return false
	}
	return true
}

// Handled implements executor.Slot: the handler returned.
func (js *jobSlot) Handled() { <-js.s.handlers }

// Begun implements executor.Slot: the job leaves the unstarted jobs.
func (js *jobSlot) Begun() { js.s.unstarted.Done() }

// releaseEarly frees the job's claim slot before its verdict is written,
// unless it already did or the committing capacity is taken (one per claim
// slot, more with WorkerTuning.VerdictBatchWait); the job then keeps its
// claim slot until it ends.
func (js *jobSlot) releaseEarly() {
	if js.early {
		return
	}
	select {
	case js.s.committing <- struct{}{}:
	default:
		return
	}
	js.early = true
	js.s.freed <- struct{}{}
}

// notify sends on ch unless a value is already pending.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// isClosed reports whether ch, which only closes, is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

package docket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/jobcompleter"
	"github.com/docketrun/docket-go/internal/movingavg"
	"github.com/docketrun/docket-go/internal/ringsweep"
	"github.com/docketrun/docket-go/policy"
	"github.com/jackc/pgx/v5/pgconn"
)

// How long free slots wait for the rest while runs are in flight: a claim
// call costs the engine a fixed price (policy row lock, cursor, ring walk,
// the call's own statement and transaction) whatever its demand, so the
// worker asks for all its slots at once unless the oldest free slot has
// waited as long as the worker's last claim call took, within these
// bounds. A slot that waits that long costs about what a call of its own
// would: under contention calls are slow, and gathering saves the most.
const (
	minClaimGather = 2 * time.Millisecond
	maxClaimGather = 20 * time.Millisecond
)

// claimGather is how long free slots wait for the rest after a claim call
// that took took.
func claimGather(took time.Duration) time.Duration {
	return min(max(took, minClaimGather), maxClaimGather)
}

// poll is the claim loop. A freed slot, a notification, a verdict written
// after its slot was freed, the poll interval, the end of a backoff or the
// due time of a run this worker released (noteDue) asks for a claim call; the call asks for exactly
// the free slots, once no backoff is pending and the slots freed since the
// last call are gathered (see gathered). A TenantFair call that comes back
// unfilled on a ring larger than S continues a sweep: the loop claims again
// at once, without waiting, up to one ring revolution (see package ringsweep). It
// returns when ctx ends or Stop is called.
func (w *Worker) poll(ctx, io, handlers context.Context, wake <-chan struct{}) {
	free := w.cfg.claimSlots()
	wanted := true
	// freedAt is when the oldest slot freed since the last claim call was
	// freed; the zero time when none was.
	var retryAt, freedAt time.Time
	// gather is how long freed slots wait for the rest (claimGather).
	gather := minClaimGather
	failures := 0
	// tokenRetried says the last claim call was made at once because a
	// rate's next token had come while the call before it ran.
	tokenRetried := false
	sweep := w.newRingSweep()
	timer := time.NewTimer(w.cfg.PollInterval)
	defer timer.Stop()
	for {
		if ctx.Err() != nil || w.stopIsRequested() {
			return
		}
		demand := w.demand(free)
		if wanted && demand > 0 && !time.Now().Before(retryAt) && w.gathered(free, freedAt, gather) {
			started := time.Now()
			w.dropDues(started)
			got, err := w.claim(io, handlers, demand)
			took := time.Since(started)
			gather = claimGather(took)
			if err == nil {
				w.ahead.observeClaim(took)
			}
			if sweep.Continuing() {
				w.client.telemetry.sweepCall(io, got.outcomes, err)
			}
			free -= got.leases
			wanted, freedAt = false, time.Time{}
			if got.leases > 0 {
				tokenRetried = false
			}
			switch {
			case err == nil:
				failures = 0
				if got.outcomes == demand {
					sweep.Reset()
					if got.poisons > 0 {
						// Poisons took no slot: due work may be left behind.
						wanted = true
						continue
					}
					break
				}
				if w.unfilledCall(io, sweep) {
					// The slots freed meanwhile join the next call at once.
					free += w.slots.takeFreed()
					wanted = true
					continue
				}
				// A rate's token comes at its own pace, and no write
				// announces it: wake at the next one, or claim at once
				// when it came while this call ran (once in a row, so a
				// token the walk cannot reach never spins the loop).
				if next, ok := w.nextRateToken(io); ok {
					if next.After(time.Now()) {
						w.noteDue(next)
					} else if !tokenRetried {
						tokenRetried, wanted = true, true
						continue
					}
				}
			case isLockContention(err):
				backoff := claimpolicy.ContentionBackoff()
				retryAt, wanted = time.Now().Add(backoff), true
				w.logger.DebugContext(ctx, "docket worker claim met lock contention", "retry_in", backoff)
			default:
				failures++
				backoff := errorBackoff(failures)
				retryAt, wanted = time.Now().Add(backoff), true
				w.logger.WarnContext(ctx, "docket worker claim failed", "error", err.Error(), "retry_in", backoff)
				if isReadOnlyServer(err) {
					w.dropReadOnlyConnections(ctx)
				}
			}
		}
		wait := w.cfg.PollInterval
		if until := time.Until(retryAt); until > 0 {
			wait = until
		} else if wanted && w.demand(free) > 0 {
			wait = min(wait, time.Until(freedAt.Add(gather)))
		} else if due, ok := w.nextDue(); ok && free > 0 {
			wait = min(wait, max(time.Until(due), 0))
		}
		timer.Reset(wait)
		deadline := time.Now().Add(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.stopRequested:
			return
		case <-w.slots.freed:
			if freedAt.IsZero() {
				freedAt = time.Now()
			}
			free += 1 + w.slots.takeFreed()
		case <-wake:
		case <-w.slots.written:
		case <-timer.C:
		case <-w.dueNoted:
			if time.Now().Before(deadline) {
				// A new due time: wait again, for it or what was awaited.
				continue
			}
		}
		wanted = true
		sweep.Reset()
	}
}

// noteDue tells the poll loop that a verdict of this worker made a run due
// at due (or that a rate's next token comes then, nextRateToken): when that
// comes before the next poll, the loop wakes for it, so a
// backoff shorter than PollInterval is honoured to the millisecond instead
// of waiting for the poll. due is by the worker's clock, taken after the
// commit returned, so it is no earlier than the stored wake time when the
// clocks agree; a run another worker takes first costs one empty claim call.
func (w *Worker) noteDue(due time.Time) {
	if !due.Before(time.Now().Add(w.cfg.PollInterval)) {
		return
	}
	w.mu.Lock()
	i, _ := slices.BinarySearchFunc(w.dues, due, time.Time.Compare)
	w.dues = slices.Insert(w.dues, i, due)
	w.mu.Unlock()
	notify(w.dueNoted)
}

// nextRateToken reads, after a TenantFair claim call that came back
// unfilled, when the next token of a rate-limited partition with due queued
// work comes (NextRateToken), so the loop claims then instead of at its
// next poll; false when there is none, under Legacy, or when the read
// failed (logged: the poll stays as it was).
func (w *Worker) nextRateToken(io context.Context) (time.Time, bool) {
	if !w.client.engine.tenantFair {
		return time.Time{}, false
	}
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	defer cancel()
	next, err := w.client.queries.NextRateToken(ctx)
	if err != nil {
		w.logger.WarnContext(io, "docket worker could not read the next rate token; claiming again at the next wake", "error", err.Error())
		return time.Time{}, false
	}
	if len(next) == 0 {
		return time.Time{}, false
	}
	return next[0], true
}

// nextDue returns the earliest noted due time no claim call served yet,
// which may have passed: a call drops the due times up to its own start
// (dropDues), so a due time that passed while a call that started before it
// ran is still here, and the loop claims for it at once.
func (w *Worker) nextDue() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dues) == 0 {
		return time.Time{}, false
	}
	return w.dues[0], true
}

// dropDues forgets the due times a claim call made at now serves.
func (w *Worker) dropDues(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i, _ := slices.BinarySearchFunc(w.dues, now, time.Time.Compare)
	for i < len(w.dues) && !w.dues[i].After(now) {
		i++
	}
	w.dues = slices.Delete(w.dues, 0, i)
}

// gathered reports whether free slots are worth a claim call now: when
// slots were freed since the last call (the oldest at freedAt) while runs
// are still in flight, the call waits until every slot is free or the
// oldest waited gather.
func (w *Worker) gathered(free int, freedAt time.Time, gather time.Duration) bool {
	return free == w.cfg.claimSlots() || freedAt.IsZero() || time.Since(freedAt) >= gather
}

// demand is how many runs a claim call asks for with free of the worker's
// claim slots free: the slots of its handlers and of the runs it holds ahead
// now (claimAhead.target), less those held. The slots beyond the target
// stay unused.
func (w *Worker) demand(free int) int {
	return free - (w.ahead.bound - w.ahead.target())
}

// claimed counts what one claim call of the Worker committed.
type claimed struct {
	// leases took a slot each; poisons took none.
	leases, poisons int
	// outcomes is leases plus poisons, against the call's demand.
	outcomes int
}

// claim asks for free outcomes and the state of the runs it leases in one
// batch (Client.claimDueRead), starts a job per lease and counts the
// outcomes: poisons count against the demand without taking a slot, so a
// call they filled may have left due work behind.
func (w *Worker) claim(io, handlers context.Context, free int) (claimed, error) {
	preference := PreferNone
	if free == 1 {
		preference = PreferReady
		if w.preferExpired {
			preference = PreferExpired
		}
		w.preferExpired = !w.preferExpired
	}
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	res, runs, err := w.client.claimDueRead(ctx, ClaimRequest{
		Now:              time.Now(),
		Limit:            free,
		ClaimTTL:         w.cfg.ClaimTTL,
		MaxClaimAttempts: w.cfg.MaxClaimAttempts,
		Preference:       preference,
	})
	cancel()
	w.emit(WorkerEvent{Kind: EventClaimed, Leases: len(res.Leases), Poisoned: len(res.Poisoned), Err: err})
	if err != nil {
		return claimed{}, err
	}
	// Noted before its jobs start, so their verdicts see it.
	w.filled.Store(res.Outcomes() == free)
	if res.Outcomes() < free {
		// The verdicts waiting for a shared statement may hold the
		// admissions that left this call short.
		w.completer.EndWaits()
	}
	if len(res.Poisoned) > 0 {
		w.logger.InfoContext(io, "docket worker claim poisoned runs over MaxClaimAttempts", "count", len(res.Poisoned))
		for _, p := range res.Poisoned {
			w.debug(io, "docket worker poisoned run", p.RunID, "attempts", p.Attempts)
		}
	}
	if len(res.Leases) > 0 {
		// Every job of the call joins its cohort before any starts, so the
		// first verdict written waits for the others of the call.
		read := &leaseRead{runs: runs}
		members := make([]*jobcompleter.Member, len(res.Leases))
		for i := range members {
			members[i] = w.completer.Join(&read.cohort)
		}
		for i, lease := range res.Leases {
			w.start(handlers, io, lease, read, members[i])
		}
	}
	return claimed{leases: len(res.Leases), poisons: len(res.Poisoned), outcomes: res.Outcomes()}, nil
}

// stopIsRequested reports whether Stop was called.
func (w *Worker) stopIsRequested() bool { return isClosed(w.stopRequested) }

// isLockContention reports a claim the engine refused because its policy
// lock was busy: ordinary contention between pollers, not a failure.
func isLockContention(err error) bool {
	unavailable, ok := errors.AsType[*ClaimPolicyUnavailableError](err)
	return ok && unavailable.Reason == policy.ReasonLockContention
}

// isReadOnlyServer reports whether err says the session is read-only: the
// claim engine's read_only_transaction refusal, or SQLSTATE 25006
// (read_only_sql_transaction) from any statement. Every connection opened
// to a server in recovery, or to an endpoint that a failover left as a
// standby, is so, and stays so after the server behind the address
// becomes writable.
func isReadOnlyServer(err error) bool {
	if unavailable, ok := errors.AsType[*ClaimPolicyUnavailableError](err); ok {
		return unavailable.Reason == policy.ReasonReadOnlyTransaction
	}
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == readOnlySQLTransaction
}

// readOnlySQLTransaction is SQLSTATE 25006.
const readOnlySQLTransaction = "25006"

// dropReadOnlyConnections closes every connection of the client's pool (a
// connection in use is closed when it is released), so the next statement
// connects afresh: after a failover whose old endpoint stays up read-only,
// the pool otherwise keeps reusing sessions that can never write.
func (w *Worker) dropReadOnlyConnections(ctx context.Context) {
	w.logger.WarnContext(ctx, "docket worker's connections are read-only; dropping its pool's connections to reconnect")
	w.client.pool.Reset()
}

// newRingSweep returns the sweep state of w's claim loop (package
// ringsweep).
func (w *Worker) newRingSweep() *ringsweep.Sweep {
	return ringsweep.New(w.client.engine.tenantFair, policy.InspectionsPerCall, w.readRingSize)
}

// unfilledCall notes a call that came back unfilled and reports whether the
// Worker should claim again at once. A failed read of the ring size ends
// the sweep there; the sweep's end is logged at debug level with its call
// count and the ring size, both counts.
func (w *Worker) unfilledCall(ctx context.Context, s *ringsweep.Sweep) bool {
	step := s.Unfilled(ctx)
	switch {
	case step.Err != nil:
		w.logger.WarnContext(ctx, "docket worker could not read the ring size; claiming again at the next wake", "error", step.Err.Error())
	case step.Swept:
		w.logger.DebugContext(ctx, "docket worker swept the ring", "calls", step.Calls, "ring_positions", step.Positions)
	}
	return step.Again
}

// readRingSize reads the ring size.
func (w *Worker) readRingSize(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	positions, err := w.client.queries.RingPositions(ctx)
	if err != nil {
		return 0, fmt.Errorf("docket: read the ring size: %w", err)
	}
	return int(positions), nil
}

// claimAhead decides how many runs the Worker holds beyond its handlers
// (WorkerTuning.ClaimAhead): a fixed number, or, by default, about as many
// as its handlers finish while one claim call takes, from moving averages
// of both times. Until both were observed it holds none.
type claimAhead struct {
	concurrency int
	// bound is the most it holds (WorkerConfig.aheadBound); fixed says it
	// always holds exactly bound.
	bound int
	fixed bool

	mu sync.Mutex
	// claim and handler average the claim calls' and the handlers' times.
	claim, handler movingavg.Duration
}

// newClaimAhead returns the claim-ahead of a resolved cfg.
func newClaimAhead(cfg WorkerConfig) *claimAhead {
	return &claimAhead{concurrency: cfg.Concurrency, bound: cfg.aheadBound(), fixed: cfg.Tuning.ClaimAhead != 0}
}

// target is how many runs to hold ahead now.
func (a *claimAhead) target() int {
	if a.fixed {
		return a.bound
	}
	a.mu.Lock()
	claim, handler := a.claim.Value(), a.handler.Value()
	a.mu.Unlock()
	if claim == 0 || handler == 0 {
		return 0
	}
	want := math.Round(float64(a.concurrency) * float64(claim) / float64(handler))
	return int(min(want, float64(a.bound)))
}

// observeClaim records how long a claim call took.
func (a *claimAhead) observeClaim(d time.Duration) { a.observe(&a.claim, d) }

// observeHandler records how long a handler call took.
func (a *claimAhead) observeHandler(d time.Duration) { a.observe(&a.handler, d) }

func (a *claimAhead) observe(avg *movingavg.Duration, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	avg.Observe(d)
}

// shortOfWork reports whether the latest claim call came back short: what
// is due is then what caps and rates let through, and a waiting verdict's
// run would hold its tenant's admission from the next of its runs, so a
// verdict written now waits for no other claim call's verdicts.
func (w *Worker) shortOfWork() bool { return !w.filled.Load() }

// claimTime is the claim calls' average time (0 before the first), which
// the verdicts' linger also measures itself by (newCompleter).
func (a *claimAhead) claimTime() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.claim.Value()
}

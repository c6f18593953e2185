package docket

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/maintenance"
	"github.com/docketrun/docket-go/internal/testseam"
	"github.com/docketrun/docket-go/policy"
)

// workOneContentionTries bounds the claim calls workOne repeats when the
// policy row is busy: a test's own workers may be polling.
const workOneContentionTries = 50

// workOne is dockettest.Work and WorkWith: it claims exactly runID of scope
// through the client's engine, as a Worker's claim call does, runs the
// handler on it in the calling goroutine as the job of a Worker of one slot
// with cfg's Handler or Handlers and Retry (its other fields are not read),
// commits the verdict with the Worker's fenced commit, then returns the run
// as committed. A run the engine would not lease now is an error that says
// why, and nothing of the run changed; so is a cfg a Worker refuses.
func workOne(ctx context.Context, c *Client, scope Scope, runID string, cfg WorkerConfig) (Run, error) {
	switch {
	case c == nil || cfg.Handler == nil && cfg.Handlers == nil:
		return Run{}, invalidArgument("Work needs a client and a handler")
	case cfg.Handler != nil && cfg.Handlers != nil:
		return Run{}, invalidArgument("Work takes a Handler or Handlers, not both")
	}
	heard := &workEvents{}
	w, err := NewWorker(c, WorkerConfig{Concurrency: 1, Handler: cfg.Handler, Handlers: cfg.Handlers, Retry: cfg.Retry,
		OnEvent: heard.hear})
	if err != nil {
		return Run{}, err
	}
	insp, err := c.InspectRun(ctx, scope, runID)
	if err != nil {
		return Run{}, err
	}
	if err := notClaimable(insp); err != nil {
		return Run{}, err
	}
	// The claim's clock is the later of the worker's and the database's,
	// so a run due at the database's now is due for it too.
	now := time.Now()
	if insp.ObservedAt.After(now) {
		now = insp.ObservedAt
	}
	lease, read, calls, err := c.claimOne(ctx, runID, now)
	if err != nil {
		return Run{}, err
	}
	if read == nil {
		return Run{}, c.notLeased(ctx, scope, runID, calls)
	}
	return w.runOne(ctx, lease, read, heard)
}

// notClaimable explains a run no claim call can lease now, or returns nil.
func notClaimable(insp RunInspection) error {
	id := insp.RunID
	switch {
	case insp.Status == StatusWaiting:
		return fmt.Errorf("docket: run %q is waiting for an external event (status waiting); MutateRun resumes it", id)
	case insp.Status.Terminal():
		return fmt.Errorf("docket: run %q is finished (status %s)", id, insp.Status)
	case insp.PoisonedAt != nil:
		return fmt.Errorf("docket: run %q is poisoned (%s); RetryPoisonedRun queues it again", id, insp.PoisonReason)
	case insp.ClaimedAt != nil && insp.ObservedAt.Sub(*insp.ClaimedAt) <= DefaultClaimTTL:
		return fmt.Errorf("docket: run %q is claimed by another holder (claimed at %s, within the %s claim TTL)",
			id, insp.ClaimedAt.UTC().Format(time.RFC3339Nano), DefaultClaimTTL)
	case insp.ClaimedAt == nil && insp.WakeAt != nil && insp.WakeAt.After(insp.ObservedAt):
		return fmt.Errorf("docket: run %q is not due until %s (the database clock reads %s)",
			id, insp.WakeAt.UTC().Format(time.RFC3339Nano), insp.ObservedAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// claimOne makes the Worker's claim calls (claim and read in one batch)
// while a transaction of its own holds every other healthy running run, so
// the engine can lease runID and nothing else. Under TenantFair it calls
// until one revolution of the ring passed. It returns the lease and its
// read, or a nil read and the number of calls made when none leased it.
func (c *Client) claimOne(ctx context.Context, runID string, now time.Time) (Lease, *leaseRead, int, error) {
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return Lease{}, nil, 0, fmt.Errorf("docket: Work: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := dbgen.New(c.scopedOn(tx, false)).LockOtherClaimableRuns(ctx, runID); err != nil {
		return Lease{}, nil, 0, fmt.Errorf("docket: Work: locking the other runs: %w", err)
	}
	revolution := 1
	if c.engine.tenantFair {
		positions, err := c.queries.RingPositions(ctx)
		if err != nil {
			return Lease{}, nil, 0, fmt.Errorf("docket: Work: reading the ring size: %w", err)
		}
		revolution = max(1, int((positions+policy.InspectionsPerCall-1)/policy.InspectionsPerCall))
	}
	req := ClaimRequest{Now: now, Limit: 1, ClaimTTL: DefaultClaimTTL, MaxClaimAttempts: math.MaxInt32}
	calls, contended := 0, 0
	for calls < revolution {
		res, runs, err := c.claimDueRead(ctx, req)
		if isLockContention(err) && contended < workOneContentionTries {
			contended++
			if !maintenance.Sleep(ctx, contentionBackoff()) {
				return Lease{}, nil, calls, ctx.Err()
			}
			continue
		}
		if err != nil {
			return Lease{}, nil, calls, fmt.Errorf("docket: Work: claim: %w", err)
		}
		calls++
		for _, lease := range res.Leases {
			if lease.RunID == runID {
				return lease, &leaseRead{runs: runs}, calls, nil
			}
			// A run inserted after the lock: hand it back at once.
			if _, err := c.ReleaseClaim(ctx, lease.Holder()); err != nil {
				return Lease{}, nil, calls, fmt.Errorf("docket: Work: releasing run %q: %w", lease.RunID, err)
			}
		}
	}
	return Lease{}, nil, calls, nil
}

// notLeased explains why the engine did not lease runID of scope in calls
// claim calls: its tenant's cap, an older queued run ahead of it, or the
// engine's own reasons.
func (c *Client) notLeased(ctx context.Context, scope Scope, runID string, calls int) error {
	if !c.engine.tenantFair {
		return fmt.Errorf("docket: the %s engine did not lease run %q in %d claim call(s)", c.engine.Name(), runID, calls)
	}
	cp, err := c.InspectClaimPolicy(ctx, scope)
	if err != nil {
		return fmt.Errorf("docket: run %q was not leased; inspecting its tenant: %w", runID, err)
	}
	if cp.Admitted >= int64(cp.EffectiveMaxActiveRuns) {
		return fmt.Errorf("docket: run %q is queued behind its tenant's cap: %s holds %d of %d admissions (%s cap)",
			runID, scope, cp.Admitted, cp.EffectiveMaxActiveRuns, cp.Source)
	}
	key, err := c.scopeKey(scope)
	if err != nil {
		return err
	}
	older, err := c.queries.OlderQueuedRuns(ctx, dbgen.OlderQueuedRunsParams{ScopeKey: key, RunID: runID})
	if err != nil {
		return fmt.Errorf("docket: run %q was not leased; reading its FIFO: %w", runID, err)
	}
	if older > 0 {
		return fmt.Errorf("docket: run %q is not at the head of its tenant's FIFO: %d older queued run(s) of %s are promoted first",
			runID, older, scope)
	}
	return fmt.Errorf("docket: the tenant_fair engine did not lease run %q in %d claim call(s) over one ring revolution", runID, calls)
}

// workEvents is what workOne's Worker reported of its one job.
type workEvents struct {
	mu      sync.Mutex
	started bool
	last    *WorkerEvent
}

// hear is the Worker's OnEvent.
func (h *workEvents) hear(e WorkerEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e.Kind {
	case EventHandlerStarted:
		h.started = true
	case EventVerdict:
		h.last = &e
	}
}

// runOne runs the job of lease, which a claim call read into read, in the
// calling goroutine exactly as w, a Worker of one slot that reports its
// events to heard, runs a job: the run is read from the claim's batch, the
// handler runs with a heartbeat and its context is cancelled if the claim
// is lost, and its verdict goes through the Worker's group commit, fenced
// on the claim. It returns the run as committed, or an error when the
// handler never ran or its verdict was not written.
func (w *Worker) runOne(ctx context.Context, lease Lease, read *leaseRead, heard *workEvents) (Run, error) {
	j, handlerCtx := newJob(w, lease, read, ctx)
	w.mu.Lock()
	w.jobs[j] = struct{}{}
	w.mu.Unlock()
	func() {
		defer w.finished(j)
		defer w.commits.Settle(j.member)
		j.run(handlerCtx, context.WithoutCancel(ctx))
	}()
	heard.mu.Lock()
	defer heard.mu.Unlock()
	switch last := heard.last; {
	case !heard.started:
		return Run{}, fmt.Errorf("docket: Work: the claimed run %q could not be read; its claim was released", lease.RunID)
	case last == nil:
		return Run{}, fmt.Errorf("docket: Work: no verdict of run %q was written", lease.RunID)
	case last.Outcome != VerdictWritten:
		return Run{}, fmt.Errorf("docket: Work: the %s verdict of run %q was %s: %w", last.Verdict, lease.RunID, last.Outcome, last.Err)
	}
	return w.client.FetchRun(context.WithoutCancel(ctx), lease.Scope, lease.RunID)
}

func init() {
	testseam.Work = workOne
	testseam.Schema = func(c *Client) string { return c.config.Schema }
}

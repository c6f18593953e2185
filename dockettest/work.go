package dockettest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/maintenance"
	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/policy"
)

// Work runs handler on the run runID of scope synchronously, in the calling
// goroutine, exactly as a Worker would and through the same code: it claims
// the run with the client's engine (ClaimDue), then works the lease with
// Client.WorkLease, which calls handler with a real *docket.Job, commits its
// verdict with the Worker's fenced commit, and returns the run as committed.
//
// Only that run is claimed: while the claim calls run, a transaction of
// Work's own locks every other running run, which the engine then skips.
// So the engine decides as it would for a Worker, and Work fails t with the
// reason when it would not lease the run now: waiting for an external
// event, finished, poisoned, claimed by another holder, not yet due, queued
// behind its tenant's cap, or behind an older queued run of its tenant
// (Work that one first). Those checks and the claim have the same side
// effects as a Worker's claim calls (the TenantFair cursor moves); the run
// itself is changed only by the lease and the verdict.
//
// The handler's context is ctx with the job's cancellation; a handler that
// panics fails the run, as under a Worker. A verdict that was not written
// (say, the claim was lost) fails t.
//
// Work runs handler as a Worker without retries (RetryPolicy{MaxAttempts:
// 1}) does, so a failed attempt fails the run, under the default
// HandlerTimeout; WorkWith takes a RetryPolicy (whose zero value retries,
// as a Worker's), a timeout and middleware, or a Handlers registry instead
// of the handler.
func Work(ctx context.Context, t TB, client *docket.Client, scope docket.Scope, runID string, handler docket.Handler) docket.Run {
	t.Helper()
	return work(ctx, t, "Work", client, scope, runID, docket.WorkerConfig{Handler: handler, Retry: docket.RetryPolicy{MaxAttempts: 1}})
}

// WorkOptions is how WorkWith handles the run: what a WorkerConfig says of
// it, for the one Worker WorkWith acts as.
type WorkOptions struct {
	// Handler runs the run. Set it or Handlers, not both.
	Handler docket.Handler
	// Handlers routes the run to the handler registered for its graph id,
	// with that graph's HandlerTimeout and HandlerRetry, as
	// WorkerConfig.Handlers does. Set it or Handler, not both.
	Handlers *docket.Handlers
	// Retry is the Worker's WorkerConfig.Retry: a failed attempt (Fail, a
	// panic, the zero Result, a timeout) with attempts left is committed as
	// that Worker commits it, a "backoff" release after the policy's delay.
	// The zero policy is the Worker's default, which retries;
	// RetryPolicy{MaxAttempts: 1} fails the run at once, as Work does. An
	// invalid policy fails t with the *docket.RetryPolicyError.
	Retry docket.RetryPolicy
	// HandlerTimeout is the Worker's WorkerConfig.HandlerTimeout (zero: one
	// minute; docket.NoHandlerTimeout: none).
	HandlerTimeout time.Duration
	// Middleware is the Worker's WorkerConfig.Middleware.
	Middleware []docket.Middleware
}

// WorkWith is Work with the handler and retry policy of opts: it works the
// run runID of scope exactly as a Worker whose WorkerConfig has opts'
// Handler or Handlers and Retry would, and returns the run as committed.
// So an application tests its retry behaviour one attempt at a time: each
// call works one attempt, and a run released with a backoff is not due
// until its wake time (WorkWith fails t saying so before that).
func WorkWith(ctx context.Context, t TB, client *docket.Client, scope docket.Scope, runID string, opts WorkOptions) docket.Run {
	t.Helper()
	return work(ctx, t, "WorkWith", client, scope, runID,
		docket.WorkerConfig{Handler: opts.Handler, Handlers: opts.Handlers, Retry: opts.Retry,
			HandlerTimeout: opts.HandlerTimeout, Middleware: opts.Middleware})
}

// work works the run and fails t, naming the helper, on an error.
func work(ctx context.Context, t TB, helper string, client *docket.Client, scope docket.Scope, runID string, cfg docket.WorkerConfig) docket.Run {
	t.Helper()
	run, err := workOne(ctx, client, scope, runID, cfg)
	if err != nil {
		t.Fatalf("dockettest: %s: %v", helper, err)
		return docket.Run{}
	}
	return run
}

// contentionTries bounds the claim calls workOne repeats when the policy
// row is busy: a test's own workers may be polling.
const contentionTries = 50

// workOne claims exactly runID of scope through the client's engine and
// works the lease with Client.WorkLease and cfg. A run the engine would not
// lease now is an error that says why, and nothing of the run changed; so
// is a cfg a Worker refuses.
func workOne(ctx context.Context, c *docket.Client, scope docket.Scope, runID string, cfg docket.WorkerConfig) (docket.Run, error) {
	switch {
	case c == nil || cfg.Handler == nil && cfg.Handlers == nil:
		return docket.Run{}, fmt.Errorf("%w: Work needs a client and a handler", docket.ErrInvalidArgument)
	case cfg.Handler != nil && cfg.Handlers != nil:
		return docket.Run{}, fmt.Errorf("%w: Work takes a Handler or Handlers, not both", docket.ErrInvalidArgument)
	}
	// Refuse a cfg a Worker refuses before anything is claimed.
	cfg.Concurrency = 1
	if _, err := docket.NewWorker(c, cfg); err != nil {
		return docket.Run{}, err
	}
	insp, err := c.InspectRun(ctx, scope, runID)
	if err != nil {
		return docket.Run{}, err
	}
	if err := notClaimable(insp); err != nil {
		return docket.Run{}, err
	}
	// The claim's clock is the later of the test's and the database's, so a
	// run due at the database's now is due for it too.
	now := time.Now()
	if insp.ObservedAt.After(now) {
		now = insp.ObservedAt
	}
	lease, leased, calls, err := claimOne(ctx, c, runID, now)
	if err != nil {
		return docket.Run{}, err
	}
	if !leased {
		return docket.Run{}, notLeased(ctx, c, scope, runID, calls)
	}
	return c.WorkLease(ctx, lease, cfg)
}

// notClaimable explains a run no claim call can lease now, or returns nil.
func notClaimable(insp docket.RunInspection) error {
	id := insp.RunID
	switch {
	case insp.Status == docket.StatusWaiting:
		return fmt.Errorf("docket: run %q is waiting for an external event (status waiting); MutateRun resumes it", id)
	case insp.Status.Terminal():
		return fmt.Errorf("docket: run %q is finished (status %s)", id, insp.Status)
	case insp.PoisonedAt != nil:
		return fmt.Errorf("docket: run %q is poisoned (%s); RetryPoisonedRun queues it again", id, insp.PoisonReason)
	case insp.ClaimedAt != nil && insp.ObservedAt.Sub(*insp.ClaimedAt) <= docket.DefaultClaimTTL:
		return fmt.Errorf("docket: run %q is claimed by another holder (claimed at %s, within the %s claim TTL)",
			id, insp.ClaimedAt.UTC().Format(time.RFC3339Nano), docket.DefaultClaimTTL)
	case insp.ClaimedAt == nil && insp.WakeAt != nil && insp.WakeAt.After(insp.ObservedAt):
		return fmt.Errorf("docket: run %q is not due until %s (the database clock reads %s)",
			id, insp.WakeAt.UTC().Format(time.RFC3339Nano), insp.ObservedAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// queriesOn returns the generated queries on db, scoped to the client's
// schema when it has one.
func queriesOn(c *docket.Client, db sqlschema.BatchSender) *dbgen.Queries {
	if schema := c.Schema(); schema != "" {
		return dbgen.New(sqlschema.NewSchema(schema).On(db, false))
	}
	return dbgen.New(db.(dbgen.DBTX))
}

// claimOne makes claim calls while a transaction of its own holds every
// other healthy running run, so the engine can lease runID and nothing
// else. Under TenantFair it calls until one revolution of the ring passed.
// It returns the lease and whether it was made, and the number of calls.
func claimOne(ctx context.Context, c *docket.Client, runID string, now time.Time) (docket.Lease, bool, int, error) {
	tx, err := c.Pool().Begin(ctx)
	if err != nil {
		return docket.Lease{}, false, 0, fmt.Errorf("docket: Work: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := queriesOn(c, tx).LockOtherClaimableRuns(ctx, runID); err != nil {
		return docket.Lease{}, false, 0, fmt.Errorf("docket: Work: locking the other runs: %w", err)
	}
	revolution := 1
	if tenantFair(c) {
		positions, err := queriesOn(c, c.Pool()).RingPositions(ctx)
		if err != nil {
			return docket.Lease{}, false, 0, fmt.Errorf("docket: Work: reading the ring size: %w", err)
		}
		revolution = max(1, int((positions+policy.InspectionsPerCall-1)/policy.InspectionsPerCall))
	}
	req := docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: docket.DefaultClaimTTL, MaxClaimAttempts: math.MaxInt32}
	calls, contended := 0, 0
	for calls < revolution {
		res, err := c.ClaimDue(ctx, req)
		if isLockContention(err) && contended < contentionTries {
			contended++
			if !maintenance.Sleep(ctx, claimpolicy.ContentionBackoff()) {
				return docket.Lease{}, false, calls, ctx.Err()
			}
			continue
		}
		if err != nil {
			return docket.Lease{}, false, calls, fmt.Errorf("docket: Work: claim: %w", err)
		}
		calls++
		for _, lease := range res.Leases {
			if lease.RunID == runID {
				return lease, true, calls, nil
			}
			// A run inserted after the lock: hand it back at once.
			if _, err := c.ReleaseClaim(ctx, lease.Holder()); err != nil {
				return docket.Lease{}, false, calls, fmt.Errorf("docket: Work: releasing run %q: %w", lease.RunID, err)
			}
		}
	}
	return docket.Lease{}, false, calls, nil
}

// tenantFair reports whether the client's engine is TenantFair.
func tenantFair(c *docket.Client) bool { return c.Policy().Name() == (policy.TenantFair{}).Name() }

// isLockContention reports a claim call refused because the policy row was
// busy.
func isLockContention(err error) bool {
	unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err)
	return ok && unavailable.Reason == policy.ReasonLockContention
}

// notLeased explains why the engine did not lease runID of scope in calls
// claim calls: its tenant's cap, an older queued run ahead of it, or the
// engine's own reasons.
func notLeased(ctx context.Context, c *docket.Client, scope docket.Scope, runID string, calls int) error {
	if !tenantFair(c) {
		return fmt.Errorf("docket: the %s engine did not lease run %q in %d claim call(s)", c.Policy().Name(), runID, calls)
	}
	cp, err := c.InspectClaimPolicy(ctx, scope)
	if err != nil {
		return fmt.Errorf("docket: run %q was not leased; inspecting its tenant: %w", runID, err)
	}
	if cp.Admitted >= int64(cp.EffectiveMaxActiveRuns) {
		return fmt.Errorf("docket: run %q is queued behind its tenant's cap: %s holds %d of %d admissions (%s cap)",
			runID, scope, cp.Admitted, cp.EffectiveMaxActiveRuns, cp.Source)
	}
	key, _ := scope.TenantID()
	older, err := queriesOn(c, c.Pool()).OlderQueuedRuns(ctx, dbgen.OlderQueuedRunsParams{ScopeKey: key, RunID: runID})
	if err != nil {
		return fmt.Errorf("docket: run %q was not leased; reading its FIFO: %w", runID, err)
	}
	if older > 0 {
		return fmt.Errorf("docket: run %q is not at the head of its tenant's FIFO: %d older queued run(s) of %s are promoted first",
			runID, older, scope)
	}
	return fmt.Errorf("docket: the tenant_fair engine did not lease run %q in %d claim call(s) over one ring revolution", runID, calls)
}

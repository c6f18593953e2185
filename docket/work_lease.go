package docket

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// WorkLease works lease, a claim the caller made with ClaimDue or
// ClaimDueTx (committed), in the calling goroutine exactly as a Worker of
// one slot with cfg works a run it claimed, and through the same code: it
// reads the run, calls cfg's Handler (or the one Handlers routes the run
// to) with a *Job while the claim's heartbeat runs, cancels the handler's
// context (a child of ctx) if the claim is lost, commits the verdict fenced
// on the claim as cfg's Retry says, and returns the run as committed. So an
// application that claims in a loop of its own (a scheduled task, a
// serverless call) handles each lease as a Worker would.
//
// cfg is validated as NewWorker validates it (ErrInvalidConfig); its
// Concurrency, Tuning.ClaimAhead, PollInterval, Retention and Schedules are not
// used, and its ClaimTTL should be the one the lease was claimed with,
// since a verdict that cannot be written for that long is given up. cfg.OnEvent hears the
// handler's start and the verdict. A failed read of the run returns the
// error and leaves the claim as it was; a run that no longer matches the
// lease (another holder, a cancel) is handed back untouched and is an
// error; a verdict that was not written is an error that wraps the
// commit's (errors.Is with ErrStaleFence, ErrRunCancelled...).
func (c *Client) WorkLease(ctx context.Context, lease Lease, cfg WorkerConfig) (Run, error) {
	if cfg.Handler == nil && cfg.Handlers == nil {
		return Run{}, invalidConfig("WorkLease needs a Handler or Handlers")
	}
	heard := &leaseEvents{forward: cfg.OnEvent}
	cfg.Concurrency, cfg.Tuning.ClaimAhead, cfg.OnEvent = 1, NoClaimAhead, heard.hear
	w, err := NewWorker(c, cfg)
	if err != nil {
		return Run{}, err
	}
	read, err := c.readLease(ctx, lease)
	if err != nil {
		return Run{}, err
	}
	return w.runOne(ctx, lease, read, heard)
}

// readLease reads the run of lease for its job, as a claim call's batch
// reads the runs it leased; a run that is gone leaves the read empty, which
// the job answers by handing the claim back.
func (c *Client) readLease(ctx context.Context, lease Lease) (*leaseRead, error) {
	scopeKey, err := c.runKey(lease.Scope, lease.RunID)
	if err != nil {
		return nil, err
	}
	read := &leaseRead{runs: map[string]dbgen.LeasedRunsRow{}}
	got, err := c.queries.GetRun(ctx, dbgen.GetRunParams{ScopeKey: scopeKey, RunID: lease.RunID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return read, nil
	case err != nil:
		return nil, fmt.Errorf("docket: WorkLease: reading run %s: %w", quoteID(lease.RunID), err)
	}
	r := got.DocketRun
	read.runs[r.RunID] = dbgen.LeasedRunsRow{RunID: r.RunID, Status: r.Status, Step: r.Step, State: r.State,
		CheckpointSeq: r.CheckpointSeq, ClaimToken: r.ClaimToken, Attempt: r.Attempt, TraceContext: r.TraceContext}
	return read, nil
}

// leaseEvents is what WorkLease's Worker reported of its one job.
type leaseEvents struct {
	// forward is the caller's OnEvent, if any.
	forward func(WorkerEvent)

	mu      sync.Mutex
	started bool
	last    *WorkerEvent
}

// hear is the Worker's OnEvent.
func (h *leaseEvents) hear(e WorkerEvent) {
	h.mu.Lock()
	switch e.Kind {
	case EventHandlerStarted:
		h.started = true
	case EventVerdict:
		h.last = &e
	}
	h.mu.Unlock()
	if h.forward != nil {
		h.forward(e)
	}
}

// runOne runs the job of lease, whose run is in read, in the calling
// goroutine exactly as w, a Worker of one slot that reports its events to
// heard, runs a job: the handler runs with a heartbeat and its context is
// cancelled if the claim is lost, and its verdict goes through the Worker's
// group commit, fenced on the claim. It returns the run as committed, or an
// error when the handler never ran or its verdict was not written.
func (w *Worker) runOne(ctx context.Context, lease Lease, read *leaseRead, heard *leaseEvents) (Run, error) {
	j, handlerCtx := w.newJob(lease, read, w.completer.Join(&read.cohort), ctx)
	func() {
		defer w.slots.end(j)
		defer w.completer.Settle(j.member)
		j.exec.Run(handlerCtx, context.WithoutCancel(ctx))
	}()
	heard.mu.Lock()
	defer heard.mu.Unlock()
	switch last := heard.last; {
	case !heard.started:
		return Run{}, fmt.Errorf("docket: WorkLease: run %s does not match its lease (read as gone, or with another holder or fence); its claim was released",
			quoteID(lease.RunID))
	case last == nil:
		return Run{}, fmt.Errorf("docket: WorkLease: no verdict of run %s was written", quoteID(lease.RunID))
	case last.Outcome != VerdictWritten:
		return Run{}, fmt.Errorf("docket: WorkLease: the %s verdict of run %s was %s: %w", last.Verdict, quoteID(lease.RunID), last.Outcome, last.Err)
	}
	return w.client.FetchRun(context.WithoutCancel(ctx), lease.Scope, lease.RunID)
}

package docket

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// CommitTx writes r, the handler's verdict, inside tx, the handler's own
// transaction, so the run settles exactly when the handler's own writes
// commit. Call it last: it stops the claim's heartbeat (the verdict's row
// lock would block it), and the handler must then commit or roll back tx
// and return before the claim TTL passes. When tx committed, the run is
// settled with r and the Result the handler returns is ignored; when tx
// rolled back, the Worker writes the returned Result as usual, fenced on the
// same claim, so the run is written exactly once either way. A second call,
// a refused fence (ErrStaleFence: the claim is gone) or an invalid r is an
// error and stages nothing.
func (j *Job) CommitTx(ctx context.Context, tx pgx.Tx, r Result) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.staged != nil:
		return invalidArgument("run %q already has a verdict written in a transaction", j.RunID)
	case j.released:
		return fmt.Errorf("%w: run %q", ErrClaimLost, j.RunID)
	}
	plan := r.plan(j.step, j.attempt, j.route.retry)
	if _, err := j.worker.client.CommitTx(ctx, tx, j.request(plan)); err != nil {
		return err
	}
	j.beat.Stop()
	j.staged = &plan
	return nil
}

// settleStaged settles a job whose handler wrote its verdict with CommitTx:
// when the row shows that verdict, the handler's transaction committed and
// the job is done; otherwise it rolled back and the returned plan is
// settled as usual. A failed check is presumed a rollback: the returned
// plan's commit is fenced, so it cannot write twice.
func (j *Job) settleStaged(io context.Context, returned commitPlan) {
	j.mu.Lock()
	staged := j.staged
	j.mu.Unlock()
	if staged == nil {
		j.settle(io, returned)
		return
	}
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	applied, err := j.worker.client.commitApplied(ctx, j.request(*staged))
	cancel()
	if err != nil {
		j.worker.failure(io, "docket worker could not check a verdict written in the handler's transaction", j.RunID, err)
	}
	if !applied {
		j.settle(io, returned)
		return
	}
	j.mu.Lock()
	j.released = j.released || staged.releasesClaim()
	j.seq++
	j.mu.Unlock()
	if staged.yields() {
		j.worker.announceYield(io)
	}
	j.worker.debug(io, "docket worker run settled in the handler's transaction", j.RunID, "result", staged.checkpointType)
	j.verdict(*staged, nil)
}

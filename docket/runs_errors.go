package docket

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// runIDConstraint is the unique constraint that identifies a duplicate run id.
const runIDConstraint = "docket_runs_run_id_key"

// runNotFound reports runID as missing from the caller's scope.
func runNotFound(runID string) error {
	return fmt.Errorf("%w: run %q", ErrNotFound, runID)
}

// mapRunWriteError turns the database errors a run write can meet because of
// its input into the package's typed errors, and wraps everything else.
func mapRunWriteError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505" && pgErr.ConstraintName == runIDConstraint:
			return fmt.Errorf("%w: %s", ErrDuplicateRun, pgErr.Detail)
		// invalid_text_representation, untranslatable_character and
		// character_not_in_repertoire: a document or text PostgreSQL refuses.
		case pgErr.Code == "22P02" || pgErr.Code == "22P05" || pgErr.Code == "22021":
			return fmt.Errorf("%w: %s: %w", ErrInvalidArgument, op, err)
		}
	}
	return fmt.Errorf("docket: %s: %w", op, err)
}

// batchWriteError is mapRunWriteError for InsertRuns: a run id that already
// exists is named with its index in the batch, found by the key PostgreSQL
// reports; anything else, or a key reported in another language than the
// server's default English, is mapped as one write.
func batchWriteError(err error, runIDs []string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == runIDConstraint {
		for i, id := range runIDs {
			if pgErr.Detail == fmt.Sprintf("Key (run_id)=(%s) already exists.", id) {
				return fmt.Errorf("%w: run %q at index %d of the batch already exists", ErrDuplicateRun, id, i)
			}
		}
	}
	return mapRunWriteError("insert runs", err)
}

// explainFenceMiss classifies a guarded write that matched no row: the run is
// missing from the scope (ErrNotFound), or it exists but the guard (token,
// sequence or expected state) no longer holds, and stale is returned, also
// matching ErrRunCancelled when an operator cancelled the run.
func explainFenceMiss(ctx context.Context, q *dbgen.Queries, scopeKey, runID string, stale error) error {
	fence, err := q.GetRunFence(ctx, dbgen.GetRunFenceParams{ScopeKey: scopeKey, RunID: runID})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return runNotFound(runID)
	case err != nil:
		return fmt.Errorf("docket: reading fence of run %q: %w", runID, err)
	case stale != nil && RunStatus(fence.Status) == StatusCancelled:
		return cancelledFence{stale: stale}
	}
	return stale
}

// cancelledFence is a holder's write refused because an operator cancelled
// the run: it matches both the refusal and ErrRunCancelled.
type cancelledFence struct{ stale error }

func (e cancelledFence) Error() string   { return e.stale.Error() + ": an operator cancelled the run" }
func (e cancelledFence) Unwrap() []error { return []error{e.stale, ErrRunCancelled} }

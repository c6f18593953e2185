package docket

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Sentinel errors of the public surface. Every error returned by this package
// that stems from one of these conditions satisfies errors.Is with it.
var (
	// ErrNotFound reports a run, or another scope's run, that does not exist.
	ErrNotFound = errors.New("docket: not found")
	// ErrStale reports a compare-and-set write whose expected version no longer matches.
	ErrStale = errors.New("docket: stale version")
	// ErrStaleFence reports a claim holder write whose token or checkpoint sequence is outdated.
	ErrStaleFence = errors.New("docket: stale claim fence")
	// ErrClaimLost reports a claim that no longer belongs to the caller.
	ErrClaimLost = errors.New("docket: claim lost")
	// ErrRunCancelled reports a run an operator cancelled (Cancel) while it
	// was claimed: the cause of its handler's context, and what a holder's
	// refused write matches besides ErrStaleFence or ErrClaimLost.
	ErrRunCancelled = errors.New("docket: run cancelled")
	// ErrInvalidCap reports a cap outside 1..2147483647.
	ErrInvalidCap = errors.New("docket: cap must be an integer in 1..2147483647")
	// ErrTenantRequired reports a tenantless run or scope under required tenancy.
	ErrTenantRequired = errors.New("docket: tenant required")
	// ErrSchemaMismatch reports a database whose Docket schema is not the binary's newest version with the validated shape.
	ErrSchemaMismatch = errors.New("docket: schema mismatch")
	// ErrNotInitialized reports a claim policy that no TenantFair startup has initialized.
	ErrNotInitialized = errors.New("docket: claim policy not initialized")
	// ErrInactiveEngine reports a claim through an engine that is not the active admission mode.
	ErrInactiveEngine = errors.New("docket: admission engine not active")
	// ErrInvalidConfig reports a Config that Open refuses before touching the database.
	ErrInvalidConfig = errors.New("docket: invalid config")
	// ErrInvalidArgument reports a request argument outside its documented domain.
	ErrInvalidArgument = errors.New("docket: invalid argument")
	// ErrDuplicateRun reports an insert whose run id already exists.
	ErrDuplicateRun = errors.New("docket: duplicate run id")
	// ErrUniqueRunExists reports a unique run (NewRun.Unique) that was not
	// inserted because another run of its scope holds its key in its
	// period: the insert returns that run instead, writes nothing and
	// leaves the caller's transaction usable.
	ErrUniqueRunExists = errors.New("docket: a run holds the unique key")
	// ErrInvalidTransition reports a lifecycle change the run's current state does not allow.
	ErrInvalidTransition = errors.New("docket: invalid run transition")
)

// MaxCap is the largest cap a policy default or override may hold.
const MaxCap = 2147483647

// ClaimPolicyUnavailableError reports a claim call the admission engine
// refused without changing anything: Reason is one of the engine's fixed
// error reasons (read_only_transaction, unsupported_isolation,
// lock_contention, not_initialized, inactive_engine, malformed_policy).
type ClaimPolicyUnavailableError struct {
	// Reason is the engine's fixed, identity-free refusal reason.
	Reason string
}

func (e *ClaimPolicyUnavailableError) Error() string {
	return fmt.Sprintf("docket: claim policy unavailable: %s", e.Reason)
}

// Is lets errors.Is match the refusals that have their own sentinel.
func (e *ClaimPolicyUnavailableError) Is(target error) bool {
	switch target {
	case ErrNotInitialized:
		return e.Reason == "not_initialized"
	case ErrInactiveEngine:
		return e.Reason == "inactive_engine"
	}
	return false
}

func invalidArgument(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

// runIDConstraint is the unique constraint that identifies a duplicate run id.
const runIDConstraint = "docket_runs_run_id_key"

// uniqueIndex is the index that lets no two runs of a scope hold one unique
// key in one period bucket; a plain insert of a held key violates it.
const uniqueIndex = "docket_runs_unique_idx"

// runNotFound reports runID as missing from the caller's scope.
func runNotFound(runID string) error {
	return fmt.Errorf("%w: run %s", ErrNotFound, quoteID(runID))
}

// mapRunWriteError turns the database errors a run write can meet because of
// its input into the package's typed errors, and wraps everything else.
func mapRunWriteError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "23505" && pgErr.ConstraintName == runIDConstraint:
			return fmt.Errorf("%w: %s", ErrDuplicateRun, pgErr.Detail)
		case pgErr.Code == "23505" && pgErr.ConstraintName == uniqueIndex:
			return fmt.Errorf("%w: %s", ErrUniqueRunExists, pgErr.Detail)
		// check_violation of the rules the facade checks first, met by a
		// write the facade's own checks could not see (another client's
		// tenant mode): the same typed errors.
		case pgErr.Code == "23514" && pgErr.ConstraintName == tenantRequiredCheck:
			return fmt.Errorf("%w: %s: the domain requires a tenant (%s)", ErrTenantRequired, op, tenantRequiredCheck)
		case pgErr.Code == "23514" && pgErr.ConstraintName == maxAttemptsCheck:
			return fmt.Errorf("%w: %s: max attempts below 1 (%s)", ErrInvalidArgument, op, maxAttemptsCheck)
		case pgErr.Code == "23514" && identifierChecks[pgErr.ConstraintName] != "":
			return fmt.Errorf("%w: %s: the %s breaks the identifier rules (%s)", ErrInvalidArgument, op, identifierChecks[pgErr.ConstraintName], pgErr.ConstraintName)
		case pgErr.Code == "23514" && pgErr.ConstraintName == uniqueCheck:
			return fmt.Errorf("%w: %s: the unique statuses are not statuses or leave out running (%s)", ErrInvalidArgument, op, uniqueCheck)
		// invalid_text_representation, untranslatable_character and
		// character_not_in_repertoire: a document or text PostgreSQL refuses.
		case pgErr.Code == "22P02" || pgErr.Code == "22P05" || pgErr.Code == "22021":
			return fmt.Errorf("%w: %s: %w", ErrInvalidArgument, op, err)
		}
	}
	return fmt.Errorf("docket: %s: %w", op, err)
}

// RunWriteError maps the error of a run insert made outside the facade (with
// the generated repository, package gen, or the app's own SQL) to the typed
// error the facade's own checks return for the same input: ErrTenantRequired
// for a tenantless run in a domain of required tenancy, ErrInvalidArgument
// for an identifier the database's checks refuse or a max attempts below 1,
// ErrDuplicateRun for a run id that exists, ErrUniqueRunExists for a unique
// key another run holds. Any other error is returned wrapped; nil stays nil.
func RunWriteError(err error) error {
	if err == nil {
		return nil
	}
	return mapRunWriteError("insert run", err)
}

// UniqueRunsExistError is the error of InsertRuns and InsertRunsTx when
// unique runs of the batch were not inserted because other runs hold their
// keys (an earlier run of the same batch among them); it matches
// ErrUniqueRunExists. The rest of the batch is inserted, the caller's
// transaction stays usable, and the returned run ids hold, at each index
// listed here, the id of the run that holds the key.
type UniqueRunsExistError struct {
	// Indexes are the positions in the batch (counted from 0), ascending,
	// of the runs not inserted.
	Indexes []int
}

// Error names the positions of the runs not inserted.
func (e *UniqueRunsExistError) Error() string {
	return fmt.Sprintf("%s: runs at indexes %v of the batch", ErrUniqueRunExists, e.Indexes)
}

// Is matches ErrUniqueRunExists.
func (e *UniqueRunsExistError) Is(target error) bool { return target == ErrUniqueRunExists }

// batchWriteError is mapRunWriteError for InsertRuns: a run id that already
// exists is named with its index in the batch, found by the key PostgreSQL
// reports; anything else, or a key reported in another language than the
// server's default English, is mapped as one write.
func batchWriteError(err error, runIDs []string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.ConstraintName == runIDConstraint {
		for i, id := range runIDs {
			if pgErr.Detail == fmt.Sprintf("Key (run_id)=(%s) already exists.", id) {
				return fmt.Errorf("%w: run %s at index %d of the batch already exists", ErrDuplicateRun, quoteID(id), i)
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
		return fmt.Errorf("docket: reading fence of run %s: %w", quoteID(runID), err)
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

// quoteID quotes an identifier (a run id, tenant id, graph id or schedule
// name) for an error message, cut after MaxIdentifierBytes bytes at a
// character boundary and followed by its full length, so an over-long id a
// caller passed is not echoed in full.
func quoteID(id string) string {
	if len(id) <= MaxIdentifierBytes {
		return strconv.Quote(id)
	}
	end := MaxIdentifierBytes
	for end > 0 && !utf8.RuneStart(id[end]) {
		end--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(id[:end]), len(id))
}

package docket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/policy"
)

// ClaimDue is the only admission entrypoint: one claim statement of the
// client's engine (TenantFair or Legacy) that leases or poisons up to
// req.Limit due or expired runs and commits on its own. An engine that
// refuses the call changes nothing and returns a *ClaimPolicyUnavailableError
// (errors.Is matches ErrNotInitialized and ErrInactiveEngine for those
// reasons). An invalid request is refused before any SQL with
// ErrInvalidArgument. With Config.Tuning.AsyncClaimCommit the statement goes in one
// batch after a local synchronous_commit off, so its implicit transaction
// commits without waiting for its WAL flush. A TenantFair client combines
// claims: a call that finds the domain's cursor held files its demand and
// waits, and may be served by the walk of the call that holds the cursor
// (docs/claim-algorithm.md, "Combined claims").
func (c *Client) ClaimDue(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	return c.claimWith(ctx, req, c.config.Tuning.AsyncClaimCommit, spanEveryCall, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		if c.engine.tenantFair || p.AsyncCommit {
			return claimBatch(ctx, c, p, c.engine.statements.claimSQL, nil, nil)
		}
		return execClaim(ctx, c.queries, c.engine.statements, p)
	})
}

// ClaimDueTx is ClaimDue inside the caller's transaction, which must be a
// writable Read Committed transaction: the claim, the cursor movement and the
// admission epochs commit or roll back with it. Config.Tuning.AsyncClaimCommit does
// not apply: the transaction's commit is the caller's.
func (c *Client) ClaimDueTx(ctx context.Context, tx pgx.Tx, req ClaimRequest) (ClaimResult, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return ClaimResult{}, err
	}
	return c.claimWith(ctx, req, false, spanEveryCall, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		return execClaim(ctx, q, c.engine.statements, p)
	})
}

// claimWith validates req, runs its production plan through exec, decodes
// and observes the result, records its span as spanning says and maps the
// errors of the public API.
func (c *Client) claimWith(ctx context.Context, req ClaimRequest, asyncCommit bool, spanning claimSpanning,
	exec func(claimpolicy.Plan) ([]claimpolicy.Row, error)) (ClaimResult, error) {
	preq, err := claimRequest(req, false)
	if err != nil {
		return ClaimResult{}, err
	}
	preq.AsyncCommit = asyncCommit
	sp := c.startClaimSpan(ctx, preq, spanning)
	start := time.Now()
	rows, err := exec(c.engine.Plan(preq))
	var res claimpolicy.Result
	if err == nil {
		res, err = c.engine.Decode(rows)
	}
	c.observeClaim(ctx, start, preq, res, err)
	if err != nil {
		err = claimError(err)
		sp.end(ClaimResult{}, err)
		return ClaimResult{}, err
	}
	out := claimResultOf(res)
	sp.end(out, nil)
	return out, nil
}

// claimRequest validates req and converts it to the engine's units.
func claimRequest(req ClaimRequest, trace bool) (claimpolicy.Request, error) {
	switch {
	case req.Now.IsZero():
		return claimpolicy.Request{}, invalidArgument("claim Now is the zero time")
	case req.Limit < 1 || req.Limit > math.MaxInt32:
		return claimpolicy.Request{}, invalidArgument("claim Limit %d is outside 1..%d", req.Limit, math.MaxInt32)
	case req.ClaimTTL < 0:
		return claimpolicy.Request{}, invalidArgument("claim ClaimTTL %v is negative", req.ClaimTTL)
	case req.MaxClaimAttempts < 1 || req.MaxClaimAttempts > math.MaxInt32:
		return claimpolicy.Request{}, invalidArgument("claim MaxClaimAttempts %d is outside 1..%d", req.MaxClaimAttempts, math.MaxInt32)
	case !req.Preference.Valid():
		return claimpolicy.Request{}, invalidArgument("claim Preference %q is none of \"\", \"ready\", \"expired\"", string(req.Preference))
	}
	cutoff := req.Now.Add(-req.ClaimTTL)
	if err := requireStorableTime("claim Now", req.Now); err != nil {
		return claimpolicy.Request{}, err
	}
	if err := requireStorableTime("claim Now minus ClaimTTL", cutoff); err != nil {
		return claimpolicy.Request{}, err
	}
	return claimpolicy.Request{
		Now:         req.Now,
		Cutoff:      cutoff,
		Demand:      int32(req.Limit),
		MaxAttempts: int32(req.MaxClaimAttempts),
		Preference:  req.Preference,
		Trace:       trace,
	}, nil
}

// SQLSTATEs a claim statement can raise.
const (
	sqlstateLockNotAvailable      = "55P03"
	sqlstateInvalidParameterValue = "22023"
)

// execClaim runs a production plan on q through the engine's generated
// accessor. An AsyncCommit plan goes in a claim batch instead
// (claimBatch), since its setting must share the claim's implicit
// transaction.
func execClaim(ctx context.Context, q *dbgen.Queries, st claimStatements, p claimpolicy.Plan) ([]claimpolicy.Row, error) {
	if p.Trace {
		return nil, fmt.Errorf("docket: a traced %s plan on the production path", p.Function)
	}
	if p.AsyncCommit {
		return nil, fmt.Errorf("docket: an asynchronous-commit %s plan outside a claim batch", p.Function)
	}
	return st.claim(ctx, q, p.Args)
}

// execClaimTrace runs a traced plan through the engine's generated accessor.
func execClaimTrace(ctx context.Context, q *dbgen.Queries, st claimStatements, p claimpolicy.Plan) ([]claimpolicy.TraceRow, error) {
	if !p.Trace {
		return nil, fmt.Errorf("docket: a production %s plan on the trace path", p.Function)
	}
	if p.AsyncCommit {
		return nil, fmt.Errorf("docket: an asynchronous-commit %s plan on the trace path", p.Function)
	}
	return st.trace(ctx, q, p.Args)
}

// claimError maps a failed claim call to the public errors: engine refusals
// and lock timeouts become *ClaimPolicyUnavailableError, rows outside the
// contract a schema mismatch.
func claimError(err error) error {
	if unavailable, ok := errors.AsType[*claimpolicy.UnavailableError](err); ok {
		return &ClaimPolicyUnavailableError{Reason: unavailable.Reason}
	}
	if errors.Is(err, claimpolicy.ErrMalformedRow) {
		return fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case sqlstateLockNotAvailable:
			return &ClaimPolicyUnavailableError{Reason: policy.ReasonLockContention}
		case sqlstateInvalidParameterValue:
			return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
	}
	return fmt.Errorf("docket: claim: %w", err)
}

// claimBatch sends claimSQL, a production claim statement, with plan p's
// arguments as one batch: one round trip, which PostgreSQL runs as one
// implicit transaction. The settings that must hold for that transaction
// come first: the schema scope when Config.Schema is set and, for an
// AsyncCommit plan, synchronous_commit off, which is then in force at the
// transaction's commit. More statements may follow the claim: more queues
// them and readMore reads their results. It serves only calls that commit
// on their own, never a caller's transaction.
func claimBatch(ctx context.Context, c *Client, p claimpolicy.Plan, claimSQL string,
	more func(*pgx.Batch), readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	if p.Trace {
		return nil, fmt.Errorf("docket: a traced %s plan on a claim batch", p.Function)
	}
	batch := &pgx.Batch{}
	settings := 0
	if c.names != nil {
		batch.Queue(sqlschema.ScopeSearchPath, c.names.SearchPath())
		settings++
	}
	if p.AsyncCommit {
		batch.Queue(dbgen.CommitClaimAsynchronously)
		settings++
	}
	a := p.Args
	batch.Queue(c.qualified(claimSQL), a.Now, a.Cutoff, a.Demand, a.MaxAttempts, a.Preference)
	if more != nil {
		more(batch)
	}
	results := c.pool.SendBatch(ctx, batch)
	rows, err := readClaimBatch(results, settings, readMore)
	// Close reports a failed commit of the batch's implicit transaction.
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// readClaimBatch reads the results of a claim batch in order: its leading
// settings statements, the claim's rows, then, through readMore when set,
// the rest.
func readClaimBatch(results pgx.BatchResults, settings int, readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	for range settings {
		if _, err := results.Exec(); err != nil {
			return nil, err
		}
	}
	claimRows, err := results.Query()
	if err != nil {
		return nil, err
	}
	rows, err := pgx.CollectRows(claimRows, pgx.RowToStructByPos[claimpolicy.Row])
	if err != nil {
		return nil, err
	}
	if readMore != nil {
		if err := readMore(results); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// claimDueRead is ClaimDue for the Worker, which needs the state of every
// run it leases: the claim statement and the read of its leased runs go to
// the server as one batch, which PostgreSQL runs as one implicit transaction.
// The read costs no round trip of its own and sees exactly the leased rows,
// which the claim keeps locked until that transaction commits. The read is
// a statement of its own because a join in the claim statement would read
// in a snapshot older than the leases (LeasedRuns in db/queries/worker.sql).
// It returns the leased runs by run id; every lease counts as one fetch_run
// store call of the batch's duration. Like every claim call of a Worker, it
// records a docket.claim span only when it leased or poisoned a run, or
// failed.
func (c *Client) claimDueRead(ctx context.Context, req ClaimRequest) (ClaimResult, map[string]dbgen.LeasedRunsRow, error) {
	start := time.Now()
	var leased []dbgen.LeasedRunsRow
	out, err := c.claimWith(ctx, req, c.config.Tuning.AsyncClaimCommit, spanOutcomeCalls, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		rows, read, err := c.execClaimRead(ctx, p)
		leased = read
		return rows, err
	})
	if err != nil {
		return ClaimResult{}, nil, err
	}
	runs := make(map[string]dbgen.LeasedRunsRow, len(leased))
	for _, row := range leased {
		runs[row.RunID] = row
	}
	for _, l := range out.Leases {
		var readErr error
		if _, found := runs[l.RunID]; !found {
			readErr = runNotFound(l.RunID)
		}
		c.telemetry.recordStore(ctx, opFetchRun, start, readErr, false)
	}
	return out, runs, nil
}

// execClaimRead sends a production plan's claim statement, which notes the
// runs it leases, and LeasedRuns as one claim batch.
func (c *Client) execClaimRead(ctx context.Context, p claimpolicy.Plan) ([]claimpolicy.Row, []dbgen.LeasedRunsRow, error) {
	var leased []dbgen.LeasedRunsRow
	more := func(b *pgx.Batch) { b.Queue(c.qualified(dbgen.LeasedRuns)) }
	readMore := func(results pgx.BatchResults) error {
		leasedRows, err := results.Query()
		if err != nil {
			return err
		}
		leased, err = pgx.CollectRows(leasedRows, pgx.RowToStructByPos[dbgen.LeasedRunsRow])
		return err
	}
	rows, err := claimBatch(ctx, c, p, c.engine.statements.noted, more, readMore)
	if err != nil {
		return nil, nil, err
	}
	return rows, leased, nil
}

// observeClaim records the identity-free observation of one claim call that
// started at start: a debug log and the claim, admission, attempt, poison and
// release metrics. Only bounded enums and counts leave this function.
func (c *Client) observeClaim(ctx context.Context, start time.Time, req claimpolicy.Request, res claimpolicy.Result, err error) {
	elapsed := time.Since(start)
	obs := c.engine.Observe(req, res, err)
	c.logger.LogAttrs(ctx, slog.LevelDebug, "docket claim",
		slog.String("policy", obs.Policy),
		slog.String("result", obs.Result),
		slog.String("reason", obs.Reason),
		slog.String("contention_phase", obs.ContentionPhase),
		slog.String("preference", obs.Preference),
		slog.Bool("fallback", obs.FallbackUsed),
		slog.Int("demand", obs.Demand),
		slog.Int("leases", obs.Leases),
		slog.Int("poisoned", obs.Poisoned),
		slog.Int("promotions", obs.Promotions),
		slog.Int("reacquisitions", obs.Reacquisitions),
		slog.Int("steals", obs.Steals),
		slog.Duration("duration", elapsed),
	)
	c.telemetry.claim(ctx, elapsed, obs, countOutcomes(res, c.engine.tenantFair))
}

// engine is the resolved admission engine, one of the closed set
// Config.ClaimPolicy accepts (resolveEngine is the only place that names
// them). Every decision that depends on which engine serves the domain is
// made there, once, and read from these fields after: the claim statements
// to run, whether the engine walks the fair ring, and how startup persists
// it.
type engine struct {
	// Engine plans, decodes and observes the engine's calls.
	claimpolicy.Engine
	// configured is the engine as Client.Policy reports it.
	configured policy.ClaimPolicy
	// tenantFair says whether the engine walks the TenantFair ring: the
	// Worker sweeps it, and every expired claim it poisons held an admission.
	tenantFair bool
	// statements are the generated claim statements of the engine's function.
	statements claimStatements
	// synchronize persists the engine in the locked singleton policy row.
	synchronize func(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error
}

// claimStatements are the generated statements of one claim function.
type claimStatements struct {
	// claim runs a call of the claim function through the generated
	// accessor, as ClaimDueTx does; claimSQL is the text ClaimDue sends in
	// a claim batch: the same call for Legacy, the combined claim for
	// TenantFair.
	claim    func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error)
	claimSQL string
	// trace runs a traced call through the generated accessor.
	trace func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error)
	// noted is the SQL of the Worker's claim-batch statement, which notes
	// the runs it leases.
	noted string
}

// legacyEngine is the Legacy engine.
func legacyEngine() engine {
	return engine{
		Engine:     claimpolicy.Legacy{},
		configured: policy.Legacy{},
		statements: claimStatements{
			claim: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error) {
				rows, err := q.LegacyClaim(ctx, dbgen.LegacyClaimParams(a))
				return convertRows(rows, err, func(r dbgen.LegacyClaimRow) claimpolicy.Row { return claimpolicy.Row(r) })
			},
			trace: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error) {
				rows, err := q.LegacyClaimTrace(ctx, dbgen.LegacyClaimTraceParams(a))
				return convertRows(rows, err, func(r dbgen.LegacyClaimTraceRow) claimpolicy.TraceRow { return claimpolicy.TraceRow(r) })
			},
			claimSQL: dbgen.LegacyClaim,
			noted:    dbgen.LegacyClaimNoted,
		},
		synchronize: synchronizeLegacy,
	}
}

// tenantFairEngine is the TenantFair engine configured by p, already
// validated.
func tenantFairEngine(p policy.TenantFair) engine {
	return engine{
		Engine:     claimpolicy.TenantFair{},
		configured: p,
		tenantFair: true,
		statements: claimStatements{
			claim: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error) {
				rows, err := q.TenantFairClaim(ctx, dbgen.TenantFairClaimParams(a))
				return convertRows(rows, err, func(r dbgen.TenantFairClaimRow) claimpolicy.Row { return claimpolicy.Row(r) })
			},
			trace: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error) {
				rows, err := q.TenantFairClaimTrace(ctx, dbgen.TenantFairClaimTraceParams(a))
				return convertRows(rows, err, func(r dbgen.TenantFairClaimTraceRow) claimpolicy.TraceRow { return claimpolicy.TraceRow(r) })
			},
			claimSQL: dbgen.TenantFairClaimCombined,
			noted:    dbgen.TenantFairClaimCombinedNoted,
		},
		synchronize: func(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error {
			return synchronizeTenantFair(ctx, q, row, p)
		},
	}
}

// convertRows converts the rows of a generated accessor, passing its error on.
func convertRows[From, To any](rows []From, err error, convert func(From) To) ([]To, error) {
	if err != nil {
		return nil, err
	}
	out := make([]To, len(rows))
	for i, r := range rows {
		out[i] = convert(r)
	}
	return out, nil
}

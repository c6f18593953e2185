package docket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/policy"
)

// Client is a started run store bound to one fairness domain: the database
// and schema that the pool's connections resolve to. It offers every method
// of Admin (the two share them: they are defined once, on the store both
// embed) and the engine's claim calls, inserts and holder writes.
type Client struct {
	// store holds what the calls Client shares with Admin need.
	*store
	config Config
	engine engine
	// tracer starts Docket's spans; nil without Config.TracerProvider.
	tracer trace.Tracer
}

// Open validates cfg, verifies the schema version and shape, synchronizes the
// claim policy row for the configured engine and returns a ready Client. Any
// failure starts nothing.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Client, error) {
	engine, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, invalidConfig("nil pool")
	}
	tel, err := newTelemetry(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	c := &Client{store: newStore(pool, cfg.TenantMode, cfg.Schema, cfg.Logger, tel), config: cfg, engine: engine, tracer: newTracer(cfg.TracerProvider)}
	domain, err := verifySchema(ctx, c.queries)
	if err != nil {
		return nil, err
	}
	if err := c.synchronizePolicy(ctx); err != nil {
		return nil, err
	}
	if err := registerQueueGauges(cfg.MeterProvider, domain, c.queries.QueueGauges); err != nil {
		return nil, err
	}
	c.logger.InfoContext(ctx, "docket client started", "policy", engine.Name(), "tenant_mode", cfg.TenantMode.String())
	return c, nil
}

// Pool returns the pool the client runs on.
func (c *Client) Pool() *pgxpool.Pool { return c.pool }

// Schema returns Config.Schema: the schema the client's statements name
// Docket's relations in, or "" when they resolve through the search_path.
func (c *Client) Schema() string { return c.config.Schema }

// Policy returns the resolved admission engine.
func (c *Client) Policy() policy.ClaimPolicy { return c.engine.configured }

// store is one fairness domain's run store without an engine: everything
// the calls an Admin offers need, and all an Admin holds. A Client embeds it
// and adds the configured engine.
type store struct {
	pool *pgxpool.Pool
	// queries run on pool, each statement scoped to the schema when set.
	queries *dbgen.Queries
	// names qualifies statements with the schema; nil when none is set.
	names *sqlschema.Schema
	// tenantMode decides whether the tenantless scope may be addressed.
	tenantMode TenantMode
	logger     *slog.Logger
	// telemetry holds the metric instruments, created once by Open or NewAdmin.
	telemetry *telemetry
}

// newStore binds pool to the domain in schema ("" for whatever the pool's
// search_path resolves to) under tenantMode. A nil logger logs nowhere.
func newStore(pool *pgxpool.Pool, tenantMode TenantMode, schema string, logger *slog.Logger, tel *telemetry) *store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st := &store{pool: pool, tenantMode: tenantMode, logger: logger, telemetry: tel}
	if schema != "" {
		st.names = sqlschema.NewSchema(schema)
	}
	st.queries = dbgen.New(st.scopedOn(pool, false))
	return st
}

// scopedOn returns db as the generated code's executor: db itself, or, when
// a schema is set, db with each statement scoped to that schema; borrowed
// marks the app's own transaction, whose search_path is restored.
func (c *store) scopedOn(db sqlschema.BatchSender, borrowed bool) dbgen.DBTX {
	if c.names == nil {
		return db.(dbgen.DBTX)
	}
	return c.names.On(db, borrowed)
}

// qualified is sql with Docket's relations in the schema, when set.
func (c *store) qualified(sql string) string {
	if c.names == nil {
		return sql
	}
	return c.names.Qualify(sql)
}

// inTx runs fn in a transaction of the store's own, its statements scoped
// to the schema when it is set.
func (c *store) inTx(ctx context.Context, fn func(q *dbgen.Queries) error) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		return fn(dbgen.New(c.scopedOn(tx, false)))
	})
}

// withTx binds the queries to the caller's transaction; a nil tx is refused
// with ErrInvalidArgument instead of panicking at the first statement.
func (c *store) withTx(tx pgx.Tx) (*dbgen.Queries, error) {
	if tx == nil {
		return nil, invalidArgument("nil transaction")
	}
	return dbgen.New(c.scopedOn(tx, true)), nil
}

// undefinedTable is SQLSTATE 42P01: the schema keeps no Docket ledger.
const undefinedTable = "42P01"

// verifySchema requires the shape of the newest embedded migration in the
// schema the search_path resolves to, however it was applied (docket
// migrate, the app's own migration tool, psql): every Docket column, one
// claim function with the fixed six-argument identity, every Docket
// function with the body this binary embeds, and the singleton policy row.
// When Docket's ledger exists it must hold exactly the embedded versions.
// It only reads, and returns the name of the schema.
func verifySchema(ctx context.Context, q *dbgen.Queries) (string, error) {
	shape, err := q.SchemaShape(ctx)
	if err != nil {
		return "", fmt.Errorf("docket: reading schema shape: %w", err)
	}
	if shape.SchemaName == "" {
		return "", fmt.Errorf("%w: the search_path %q names no schema this role can use (none exists, or the role lacks USAGE on it)",
			ErrSchemaMismatch, shape.SearchPath)
	}
	where := fmt.Sprintf("in schema %q (search_path %q)", shape.SchemaName, shape.SearchPath)
	if err := verifyLedger(ctx, q, where); err != nil {
		return "", err
	}
	missing, err := q.MissingColumns(ctx, requiredColumns())
	if err != nil {
		return "", fmt.Errorf("docket: reading schema shape: %w", err)
	}
	if len(missing) == len(db.Columns) {
		return "", fmt.Errorf("%w: no Docket tables %s", ErrSchemaMismatch, where)
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: missing %s: %s", ErrSchemaMismatch, where, strings.Join(missing, ", "))
	}
	if shape.ClaimFunctionCount != 1 || shape.ClaimFunctionExactCount != 1 {
		return "", fmt.Errorf("%w: want exactly one six-argument docket_tenant_fair_claim %s, found %d function(s), %d with that identity",
			ErrSchemaMismatch, where, shape.ClaimFunctionCount, shape.ClaimFunctionExactCount)
	}
	if err := verifyFunctions(ctx, q); err != nil {
		return "", err
	}
	// Both engines lock the singleton; without it nothing could be admitted.
	if _, err := q.GetClaimPolicy(ctx); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return "", fmt.Errorf("%w: the docket_claim_policy singleton row is missing %s", ErrSchemaMismatch, where)
		}
		return "", fmt.Errorf("docket: reading claim policy: %w", err)
	}
	// coalesce(current_schema()::text, '') leaves sqlc without a type.
	name, _ := shape.SchemaName.(string)
	return name, nil
}

// verifyLedger compares Docket's ledger, when the schema keeps one, with the
// embedded migrations. A schema without it (applied by another tool) is
// judged by its shape alone.
func verifyLedger(ctx context.Context, q *dbgen.Queries, where string) error {
	applied, err := q.LedgerVersions(ctx)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == undefinedTable {
		return nil
	}
	if err != nil {
		return fmt.Errorf("docket: reading docket_schema_migrations: %w", err)
	}
	if err := refusePreRelease(applied, where, ErrSchemaMismatch); err != nil {
		return err
	}
	want, err := embeddedVersions()
	if err != nil {
		return err
	}
	if !slices.Equal(applied, want) {
		return fmt.Errorf("%w: applied migrations %v %s, want %v", ErrSchemaMismatch, applied, where, want)
	}
	return nil
}

// requiredColumns lists db.Columns as "table.column".
func requiredColumns() []string {
	out := make([]string, len(db.Columns))
	for i, c := range db.Columns {
		out[i] = c.Table + "." + c.Name
	}
	return out
}

// synchronizePolicy persists the configured engine and the tenant mode
// (tenant_required, which the insert trigger enforces on every writer) in
// the singleton policy row, in one transaction that holds the row lock, so
// concurrent starts of one homogeneous configuration serialize and converge
// to one write.
// TenantFair: the first start initializes the default; a changed configured
// cap overwrites it; an unchanged one writes nothing, so a runtime default
// change survives restarts. Overrides are never touched.
//
// A start that makes the domain walk parked (a changed configured
// ParkDormant turned on, or a switch from Legacy to a domain that parks)
// then parks every dormant partition, after the commit, as
// PutClaimPolicyParking(on) does.
func (c *Client) synchronizePolicy(ctx context.Context) error {
	var before dbgen.DocketClaimPolicy
	err := c.inTx(ctx, func(q *dbgen.Queries) error {
		row, err := q.LockClaimPolicy(ctx)
		if err != nil {
			return fmt.Errorf("docket: locking claim policy: %w", err)
		}
		before = row
		if _, err := q.SynchronizeTenantRequired(ctx, c.tenantMode == TenantRequired); err != nil {
			return fmt.Errorf("docket: recording the tenant mode: %w", err)
		}
		return c.engine.synchronize(ctx, q, row)
	})
	if err != nil {
		return err
	}
	if startsParking(before, c.engine) {
		c.parkDormantPartitions(ctx)
	}
	return nil
}

// startsParking reports whether synchronizing e over the policy row before
// turns the parked walk on: before, the domain did not walk parked, and the
// synchronized TenantFair engine leaves park_dormant on.
func startsParking(before dbgen.DocketClaimPolicy, e engine) bool {
	p, ok := e.configured.(policy.TenantFair)
	if !ok {
		return false
	}
	wasParking := before.AdmissionMode == p.Name() && before.ParkDormant
	parking := before.ParkDormant
	if before.ConfiguredParkDormant != p.ParkDormant {
		parking = p.ParkDormant
	}
	return parking && !wasParking
}

// synchronizeLegacy selects the Legacy engine. It leaves the persisted
// default and every marker alone: Legacy never reads or creates markers, and
// lifecycle writes keep clearing them as usual.
func synchronizeLegacy(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error {
	legacy := policy.Legacy{}.Name()
	if row.AdmissionMode == legacy {
		return nil
	}
	if _, err := q.SetAdmissionMode(ctx, legacy); err != nil {
		return fmt.Errorf("docket: selecting legacy admission: %w", err)
	}
	return nil
}

// synchronizeTenantFair selects TenantFair and persists its configured cap
// and ParkDormant.
func synchronizeTenantFair(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy, engine policy.TenantFair) error {
	switching := row.AdmissionMode != engine.Name()
	if switching {
		// Claims taken under Legacy become admissions, or an expired one
		// could never be recovered by TenantFair's admitted-only expired page.
		// A scope pushed over its cap this way carries debt; nothing is trimmed.
		if _, err := q.MarkLegacyClaimsAdmitted(ctx); err != nil {
			return fmt.Errorf("docket: adopting legacy claims: %w", err)
		}
		// Legacy claims ignore parking, so a parked partition may now hold
		// a claim; the walk starts again from the whole ring.
		if _, err := q.UnparkAllPartitions(ctx); err != nil {
			return fmt.Errorf("docket: unparking partitions: %w", err)
		}
	}
	configured := int32(engine.DefaultMaxActiveRuns)
	if row.MaxActive == nil || row.ConfiguredMaxActive == nil || *row.ConfiguredMaxActive != configured {
		if _, err := q.InitializeClaimPolicy(ctx, &configured); err != nil {
			return fmt.Errorf("docket: persisting the configured claim policy default: %w", err)
		}
	} else if switching {
		if _, err := q.SetAdmissionMode(ctx, engine.Name()); err != nil {
			return fmt.Errorf("docket: selecting tenant_fair admission: %w", err)
		}
	}
	return synchronizeParkDormant(ctx, q, row, engine.ParkDormant)
}

// synchronizeParkDormant persists a changed configured ParkDormant, exactly
// like the cap: an unchanged one writes nothing, so a runtime change made
// with PutClaimPolicyParking survives restarts until the configuration
// itself changes.
func synchronizeParkDormant(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy, configured bool) error {
	if row.ConfiguredParkDormant == configured {
		return nil
	}
	if _, err := q.SynchronizeParkDormant(ctx, configured); err != nil {
		return fmt.Errorf("docket: persisting the configured park_dormant: %w", err)
	}
	if !configured {
		if _, err := q.UnparkAllPartitions(ctx); err != nil {
			return fmt.Errorf("docket: unparking partitions: %w", err)
		}
	}
	return nil
}

// SchemaVersion is the version of the newest migration this binary embeds:
// the schema version Open requires.
func SchemaVersion() (string, error) {
	versions, err := embeddedVersions()
	if err != nil {
		return "", err
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("docket: the binary embeds no migration")
	}
	return versions[len(versions)-1], nil
}

// verifyFunctions compares every Docket function installed in the schema with
// the source this binary embeds for it (the version the newest migration
// installs), by the MD5 of the body PostgreSQL stores. A missing or changed
// function is ErrSchemaMismatch naming each function, its expected source
// file and what differs. Overloads are the shape check's concern; here one
// installed body of the name must match.
func verifyFunctions(ctx context.Context, q *dbgen.Queries) error {
	want, err := db.InstalledFunctions()
	if err != nil {
		return fmt.Errorf("docket: reading embedded functions: %w", err)
	}
	rows, err := q.InstalledFunctionBodies(ctx)
	if err != nil {
		return fmt.Errorf("docket: reading installed functions: %w", err)
	}
	installed := map[string][]string{}
	for _, r := range rows {
		installed[r.Name] = append(installed[r.Name], r.BodyMd5)
	}
	var problems []string
	for _, fn := range want {
		bodies := installed[fn.Name]
		switch {
		case len(bodies) == 0:
			problems = append(problems, fmt.Sprintf("function %s is missing (want %s)", fn.Name, fn.File))
		case !slices.Contains(bodies, fn.BodyMD5):
			problems = append(problems, fmt.Sprintf("function %s differs from %s (installed body md5 %s, want %s)",
				fn.Name, fn.File, strings.Join(bodies, ", "), fn.BodyMD5))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrSchemaMismatch, strings.Join(problems, "; "))
	}
	return nil
}

// announceDue wakes the domain's listening workers when any of wakeAts (a
// zero time meaning "now") is due, so they claim at once instead of at their
// next poll. It runs on q: inside a caller's transaction PostgreSQL delivers
// the notification at commit and drops it on rollback.
//
// The notification is a hint, never needed for correctness: workers poll
// anyway. A failure is therefore logged, not returned, because the write it
// follows has already succeeded (or, inside a transaction, the failure aborts
// that transaction and its commit reports it).
func (c *store) announceDue(ctx context.Context, q *dbgen.Queries, wakeAts ...time.Time) {
	now := time.Now()
	for _, at := range wakeAts {
		if at.IsZero() || !at.After(now) {
			if err := q.NotifyRunsDue(ctx); err != nil {
				c.logger.LogAttrs(ctx, slog.LevelWarn, "docket due-run notification failed", slog.String("error", err.Error()))
			}
			return
		}
	}
}

// announceIfDue announces row when the write that returned it left it due
// now: running, unclaimed, healthy, with a wake time that has come (a
// resume, a released claim, a retried poison, a cooperative yield, a past
// ReleaseAt or retry time). On a caller's transaction q delivers it at
// commit.
func (c *store) announceIfDue(ctx context.Context, q *dbgen.Queries, row dbgen.DocketRun) {
	if row.Status == string(StatusRunning) && row.ClaimToken == nil && row.PoisonedAt == nil && row.WakeAt != nil {
		c.announceDue(ctx, q, *row.WakeAt)
	}
}

package migration

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// migrationCount is how many migrations the binary embeds: gooseApplied of
// it brings a schema to the newest version, labelled newest.
var (
	migrationCount = len(testkit.MigrationNames)
	newest         = testkit.MigrationNewestLabel
)

// The line `docket migrate status --schema docket` ends with for a schema
// goose brought to the newest version.
var outsideNewest = "applied outside Docket's ledger, shape matches " + newest + ": `docket migrate adopt --schema docket` records V1.." + newest + " in docket_schema_migrations\n"

// The refusals of up and down over a schema goose brought to the newest
// version, as the CLI prints them.
var (
	upRefusedNewest   = "docket: migrate up: schema applied outside Docket's ledger: no Docket ledger in schema docket, but Docket's objects are there, applied by another tool (shape matches " + newest + "): nothing was applied; run `docket migrate adopt --schema docket` to record V1.." + newest + " in docket_schema_migrations, then `docket migrate up` applies only later versions\n"
	downRefusedNewest = "docket: migrate down: schema applied outside Docket's ledger: no Docket ledger in schema docket; the schema was applied outside Docket (shape matches " + newest + "): nothing was rolled back; run `docket migrate adopt --schema docket` first, or roll back with the tool that applied it\n"
)

// cliExact runs the docket command and requires its exit code, stdout and
// stderr exactly.
func cliExact(t *testing.T, code int, stdout, stderr string, args ...string) {
	t.Helper()
	r := testkit.CLIRun(t, args...)
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		t.Fatalf("docket %s: exit %d, want %d\nstdout: %q\nwant:   %q\nstderr: %q\nwant:   %q",
			strings.Join(args, " "), r.Code, code, r.Stdout, stdout, r.Stderr, stderr)
	}
}

// A schema goose migrated keeps goose's ledger, not Docket's: status says
// which version its shape matches (derived by comparing it with what each
// embedded migration creates), for the newest version and an older one,
// and keeps nothing.
func TestOutsideLedgerStatusNamesTheVersionTheShapeMatches(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	before := gooseState(t, pool)
	cliExact(t, testkit.ExitOK, migrationLines(repeat("outside", migrationCount)...)+outsideNewest, "",
		"migrate", "status", "--schema", "docket", "--database-url", databaseURL)
	statuses, err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema}).Status(testkit.Context(t), docket.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range statuses {
		if s.Name != testkit.MigrationNames[i] || s.Applied || !s.OutsideLedger {
			t.Fatalf("status %d = %+v, want %s outside the ledger, not applied", i, s, testkit.MigrationNames[i])
		}
	}
	expectGooseStateUnchanged(t, "status", pool, before)

	v1URL, _ := gooseApplied(t, 1)
	cliExact(t, testkit.ExitOK, migrationLines(append(repeat("outside", 1), repeat("pending", migrationCount-1)...)...)+
		"applied outside Docket's ledger, shape matches V1: `docket migrate adopt --schema docket` records V1 in docket_schema_migrations\n", "",
		"migrate", "status", "--schema", "docket", "--database-url", v1URL)
	// Without --schema the hint names no schema; the search_path decides.
	cliExact(t, testkit.ExitOK, migrationLines(append(repeat("outside", 1), repeat("pending", migrationCount-1)...)...)+
		"applied outside Docket's ledger, shape matches V1: `docket migrate adopt` records V1 in docket_schema_migrations\n", "",
		"migrate", "status", "--database-url", testkit.MigrationURLWithSearchPath(t, v1URL, gooseSchema))
}

// Status tells every version apart: a schema goose brought to Vn shows
// V1..Vn outside the ledger and the rest pending.
func TestOutsideLedgerStatusTellsEveryVersionApart(t *testing.T) {
	t.Parallel()
	for n := 1; n <= migrationCount; n++ {
		t.Run(testkit.MigrationNames[n-1], func(t *testing.T) {
			t.Parallel()
			databaseURL, _ := gooseApplied(t, n)
			statuses, err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema}).Status(testkit.Context(t), docket.MigrateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range statuses {
				if s.Name != testkit.MigrationNames[i] || s.Applied || s.OutsideLedger != (i < n) {
					t.Fatalf("status %d of a schema goose brought to V%d = %+v", i, n, s)
				}
			}
		})
	}
}

// A schema whose name needs quoting (upper-case letters) is compared,
// adopted, rolled back and migrated like any other.
func TestAdoptInASchemaWhoseNameNeedsQuoting(t *testing.T) {
	t.Parallel()
	const schema = "Docket_App"
	databaseURL, pool := gooseAppliedIn(t, schema, migrationCount)
	args := []string{"--schema", schema, "--database-url", databaseURL}
	cliExact(t, testkit.ExitOK, migrationLines(repeat("outside", migrationCount)...)+
		"applied outside Docket's ledger, shape matches "+newest+": `docket migrate adopt --schema Docket_App` records V1.."+newest+" in docket_schema_migrations\n", "",
		append([]string{"migrate", "status"}, args...)...)
	testkit.CLIExpect(t, testkit.ExitOK, "recorded "+testkit.MigrationNewestName+" in schema Docket_App\n", append([]string{"migrate", "adopt"}, args...)...)
	cliExact(t, testkit.ExitOK, migrationLines(repeat("applied", migrationCount)...), "", append([]string{"migrate", "status"}, args...)...)
	testkit.CLIExpect(t, testkit.ExitOK, "rolled back "+testkit.MigrationNewestName+" in schema Docket_App", append([]string{"migrate", "down"}, args...)...)
	testkit.CLIExpect(t, testkit.ExitOK, "applied "+testkit.MigrationNewestName+" in schema Docket_App", append([]string{"migrate", "up"}, args...)...)
	cfg := testkit.TenantFairConfig(2)
	cfg.Schema = schema
	testkit.OpenClient(t, pool, cfg)
}

// A goose-applied schema whose shape matches no version (here a column was
// added by hand) is said to match none, with the closest version and the
// difference; status fails and keeps nothing.
func TestOutsideLedgerStatusSaysWhenTheShapeMatchesNoVersion(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	testkit.ExecSQL(t, pool, `alter table docket.docket_runs add column note text`)
	before := gooseState(t, pool)
	cliExact(t, testkit.ExitFailure, "",
		"docket: migrate status: schema applied outside Docket's ledger: no Docket ledger in schema docket, and its Docket objects do not have the shape of any Docket version (closest "+newest+": extra column docket_runs.note): restore the shape of one version with the tool that applied it, then run `docket migrate adopt --schema docket`\n",
		"migrate", "status", "--schema", "docket", "--database-url", databaseURL)
	_, err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema}).Status(testkit.Context(t), docket.MigrateOptions{})
	outside, ok := errors.AsType[*docket.OutsideLedgerError](err)
	if !ok || !errors.Is(err, docket.ErrSchemaMismatch) || !errors.Is(err, docket.ErrOutsideLedger) ||
		outside.Version != "" || outside.Closest != testkit.MigrationNewest || !slices.Equal(outside.Differences, []string{"extra column docket_runs.note"}) {
		t.Fatalf("status of a mismatched schema: %#v", err)
	}
	expectGooseStateUnchanged(t, "status", pool, before)
}

// up over a goose-applied schema refuses with a typed error instead of
// re-creating it (relation "docket_runs" already exists), and changes
// nothing: not the catalog, not goose's ledger, and it creates no Docket
// ledger; every form of Migrate refuses alike.
func TestOutsideLedgerUpIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	before := gooseState(t, pool)
	cliExact(t, testkit.ExitFailure, "", upRefusedNewest, "migrate", "up", "--schema", "docket", "--database-url", databaseURL)
	expectGooseStateUnchanged(t, "docket migrate up", pool, before)

	ctx := testkit.Context(t)
	config := docket.MigratorConfig{Schema: gooseSchema}
	expectRefusedAtNewest := func(what string, err error) {
		t.Helper()
		outside, ok := errors.AsType[*docket.OutsideLedgerError](err)
		if !ok || !errors.Is(err, docket.ErrOutsideLedger) || errors.Is(err, docket.ErrSchemaMismatch) ||
			outside.Schema != gooseSchema || outside.Version != testkit.MigrationNewest {
			t.Fatalf("%s over a goose-applied schema: %#v", what, err)
		}
		expectGooseStateUnchanged(t, what, pool, before)
	}
	expectRefusedAtNewest("Migrate over a URL", testkit.URLMigrator(t, databaseURL, config).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	poolMigrator := testkit.PoolMigrator(t, pool, config)
	expectRefusedAtNewest("Migrate over a pool", poolMigrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = poolMigrator.MigrateTx(ctx, tx, docket.MigrateUp, docket.MigrateOptions{})
	if rollbackErr := tx.Rollback(ctx); rollbackErr != nil {
		t.Fatal(rollbackErr)
	}
	expectRefusedAtNewest("MigrateTx", err)
}

// down over a goose-applied schema says what it cannot do and what to do
// instead, and changes nothing.
func TestOutsideLedgerDownExplainsAndChangesNothing(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	before := gooseState(t, pool)
	cliExact(t, testkit.ExitFailure, "", downRefusedNewest, "migrate", "down", "--schema", "docket", "--database-url", databaseURL)
	expectGooseStateUnchanged(t, "docket migrate down", pool, before)
	err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema}).Migrate(testkit.Context(t), docket.MigrateDown, docket.MigrateOptions{})
	if outside, ok := errors.AsType[*docket.OutsideLedgerError](err); !ok || outside.Version != testkit.MigrationNewest {
		t.Fatalf("down over a goose-applied schema: %#v", err)
	}
	expectGooseStateUnchanged(t, "Migrate down", pool, before)
}

// adopt records every version of a schema goose brought to the newest in
// Docket's ledger and touches nothing else; then status shows them applied,
// up has nothing to do, down rolls the newest back to exactly Docket's own
// version below it, and up applies it again. Open works before adoption
// (by shape) and after (by ledger).
func TestAdoptThenStatusUpAndDownWork(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	cfg := testkit.TenantFairConfig(2)
	cfg.Schema = gooseSchema
	testkit.OpenClient(t, pool, cfg)
	objects := docketObjects(t, pool)

	var adopted strings.Builder
	adopted.WriteString("schema docket has the shape of " + newest + ", applied outside Docket's ledger: recording it in docket_schema_migrations\n")
	for _, name := range testkit.MigrationNames {
		adopted.WriteString("recorded " + name + " in schema docket\n")
	}
	args := []string{"--schema", "docket", "--database-url", databaseURL}
	cliExact(t, testkit.ExitOK, adopted.String(), "", append([]string{"migrate", "adopt"}, args...)...)
	// goose's own version 0 and one row per migration.
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.goose_db_version`); got != int64(migrationCount)+1 {
		t.Fatalf("goose_db_version holds %d rows after adopt, want its %d", got, migrationCount+1)
	}
	withLedger := append(slices.Clone(objects), docketLedgerObjects...)
	slices.Sort(withLedger)
	testkit.MigrationExpectSameCatalog(t, "adopt adds only the ledger", docketObjects(t, pool), withLedger)
	cliExact(t, testkit.ExitOK, migrationLines(repeat("applied", migrationCount)...), "", append([]string{"migrate", "status"}, args...)...)
	cliExact(t, testkit.ExitOK, "schema docket is up to date at "+testkit.MigrationNewest+": nothing to apply\n", "", append([]string{"migrate", "up"}, args...)...)
	testkit.OpenClient(t, pool, cfg)

	down := testkit.CLIExpect(t, testkit.ExitOK, "", append([]string{"migrate", "down"}, args...)...)
	if !strings.HasPrefix(down.Stdout, "rolled back "+testkit.MigrationNewestName+" in schema docket (") || strings.Count(down.Stdout, "\n") != 1 {
		t.Fatalf("down printed %q", down.Stdout)
	}
	cliExact(t, testkit.ExitOK, migrationLines(append(repeat("applied", migrationCount-1), "pending")...), "", append([]string{"migrate", "status"}, args...)...)
	belowNewest := testkit.MigrationAllVersions[migrationCount-2]
	testkit.MigrationExpectSameCatalog(t, "goose "+newest+" adopted, then down", docketObjects(t, pool), referenceCatalog(t, belowNewest))
	testkit.CLIExpect(t, testkit.ExitOK, "applied "+testkit.MigrationNewestName+" in schema docket", append([]string{"migrate", "up"}, args...)...)
	testkit.MigrationExpectSameCatalog(t, "goose "+newest+" adopted, down, up", docketObjects(t, pool), referenceCatalog(t, ""))
	testkit.OpenClient(t, pool, cfg)
}

// docketLedgerObjects are the catalog entries of Docket's ledger.
var docketLedgerObjects = []string{
	"column docket_schema_migrations.applied_at timestamp with time zone notnull=true generated= identity= default=now()",
	"column docket_schema_migrations.version text notnull=true generated= identity= default=",
	"constraint docket_schema_migrations.docket_schema_migrations_pkey PRIMARY KEY (version)",
	"constraint docket_schema_migrations.docket_schema_migrations_version_check CHECK ((version ~ '^[0-9]{14}$'::text))",
	"index docket_schema_migrations_pkey CREATE UNIQUE INDEX docket_schema_migrations_pkey ON SCHEMA.docket_schema_migrations USING btree (version)",
	"relation docket_schema_migrations kind=r",
	"relation docket_schema_migrations_pkey kind=i",
}

// Adopting a schema goose brought to V1 records V1 only; up then applies
// V2, and the schema ends as Docket's own newest.
func TestAdoptOfAnOlderVersionLetsUpApplyTheRest(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, 1)
	var log strings.Builder
	if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: gooseSchema, Log: &log}).Migrate(testkit.Context(t), docket.MigrateAdopt, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "schema docket has the shape of V1, applied outside Docket's ledger: recording it in docket_schema_migrations\n" +
		"recorded 20261101000001_docket_v1.sql in schema docket\n"
	if log.String() != want {
		t.Fatalf("adopt logged\n%s\nwant\n%s", log.String(), want)
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: gooseSchema}, testkit.MigrationAllVersions[:1]...)
	log.Reset()
	if err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema, Log: &log}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	var applied []string
	for line := range strings.Lines(log.String()) {
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "applied "), " ")
		applied = append(applied, name)
	}
	if !slices.Equal(applied, testkit.MigrationNames[1:]) {
		t.Fatalf("up after adopting V1 applied %v, want %v", applied, testkit.MigrationNames[1:])
	}
	testkit.MigrationExpectSameCatalog(t, "goose V1 adopted, then up", docketObjects(t, pool), referenceCatalog(t, ""))
}

// adopt refuses, with a typed error and nothing changed, a goose-applied
// schema whose shape matches no version, one whose shape is newer than
// Target, and a schema without Docket's tables (never creating it).
func TestAdoptRefusesAShapeThatMatchesNoVersion(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	testkit.ExecSQL(t, pool, `alter table docket.docket_runs add column note text`)
	before := gooseState(t, pool)
	cliExact(t, testkit.ExitFailure, "",
		"docket: migrate adopt: schema applied outside Docket's ledger: no Docket ledger in schema docket, and its Docket objects do not have the shape of any Docket version (closest "+newest+": extra column docket_runs.note): nothing was recorded; restore the shape of one version with the tool that applied it, then run `docket migrate adopt --schema docket`\n",
		"migrate", "adopt", "--schema", "docket", "--database-url", databaseURL)
	expectGooseStateUnchanged(t, "docket migrate adopt", pool, before)
	err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: gooseSchema}).Migrate(testkit.Context(t), docket.MigrateAdopt, docket.MigrateOptions{})
	if !errors.Is(err, docket.ErrSchemaMismatch) || !errors.Is(err, docket.ErrOutsideLedger) {
		t.Fatalf("adopt of a mismatched shape: %v", err)
	}
	expectGooseStateUnchanged(t, "Migrate adopt", pool, before)

	// Target bounds the versions the shape may match.
	newestURL, newestPool := gooseApplied(t, migrationCount)
	before = gooseState(t, newestPool)
	err = testkit.URLMigrator(t, newestURL, docket.MigratorConfig{Schema: gooseSchema}).Migrate(testkit.Context(t), docket.MigrateAdopt, docket.MigrateOptions{Target: testkit.MigrationV1Version})
	if outside, ok := errors.AsType[*docket.OutsideLedgerError](err); !ok || !errors.Is(err, docket.ErrSchemaMismatch) || outside.Closest != testkit.MigrationV1Version ||
		!strings.Contains(err.Error(), "do not have the shape of any Docket version up to V1 (closest V1: ") {
		t.Fatalf("adopt of a %s shape with Target V1: %v", newest, err)
	}
	expectGooseStateUnchanged(t, "Migrate adopt with Target", newestPool, before)

	empty := pgtest.NewEmptyDatabase(t)
	emptyPool := testkit.PoolFor(t, empty)
	catalog := testkit.Catalog(t, emptyPool)
	cliExact(t, testkit.ExitFailure, "", "docket: migrate adopt: schema mismatch: schema docket does not exist: nothing to adopt (`docket migrate up --create` installs Docket)\n",
		"migrate", "adopt", "--schema", "docket", "--database-url", empty)
	cliExact(t, testkit.ExitFailure, "", "docket: migrate adopt: schema mismatch: no Docket tables in schema public: nothing to adopt (`docket migrate up --create` installs Docket)\n",
		"migrate", "adopt", "--database-url", empty)
	if got := testkit.Catalog(t, emptyPool); got != catalog {
		t.Fatalf("a refused adopt changed the catalog: %s, was %s", got, catalog)
	}
	// An app's own table named docket_* is no Docket install: adopt finds
	// nothing to adopt, and up installs Docket beside it.
	testkit.ExecSQL(t, emptyPool, `create table docket_archive (id bigint primary key)`)
	testkit.CLIExpect(t, testkit.ExitFailure, "no Docket tables in schema public", "migrate", "adopt", "--database-url", empty)
	testkit.MigrateOrFail(t, empty, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, empty, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
}

// adopt refuses a schema whose versions a ledger already records: Docket's
// own (migrated by Docket, or adopted before) and an earlier release's
// dbmate schema_migrations; each refusal changes nothing.
func TestAdoptRefusesWhenALedgerExists(t *testing.T) {
	t.Parallel()
	migrated := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, migrated, testkit.MigrateCall{Schema: gooseSchema})
	pool := testkit.PoolFor(t, migrated)
	before := strings.Join(testkit.MigrationCatalog(t, pool, gooseSchema), "\n")
	cliExact(t, testkit.ExitFailure, "",
		"docket: migrate adopt: schema already keeps Docket's ledger: schema docket records "+strings.Join(testkit.MigrationAllVersions, ", ")+" in docket_schema_migrations: nothing was adopted; `docket migrate status --schema docket` lists them\n",
		"migrate", "adopt", "--schema", "docket", "--database-url", migrated)
	err := testkit.URLMigrator(t, migrated, docket.MigratorConfig{Schema: gooseSchema}).Migrate(testkit.Context(t), docket.MigrateAdopt, docket.MigrateOptions{})
	if !errors.Is(err, docket.ErrLedgerExists) {
		t.Fatalf("adopt of a Docket-migrated schema: %v", err)
	}
	if after := strings.Join(testkit.MigrationCatalog(t, pool, gooseSchema), "\n"); after != before {
		t.Fatal("a refused adopt changed the schema")
	}
	testkit.MigrationExpectApplied(t, migrated, testkit.MigrateCall{Schema: gooseSchema}, testkit.MigrationAllVersions...)

	gooseURL, goose := gooseApplied(t, migrationCount)
	testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "adopt", "--schema", "docket", "--database-url", gooseURL)
	adopted := gooseState(t, goose)
	testkit.CLIExpect(t, testkit.ExitFailure, "schema already keeps Docket's ledger", "migrate", "adopt", "--schema", "docket", "--database-url", gooseURL)
	expectGooseStateUnchanged(t, "a second adopt", goose, adopted)

	// An earlier release recorded Docket's versions in dbmate's ledger.
	legacy := pgtest.NewDatabase(t)
	legacyPool := testkit.PoolFor(t, legacy)
	testkit.ExecSQL(t, legacyPool, `drop table docket_schema_migrations;
		create table schema_migrations (version varchar(128) primary key)`)
	testkit.ExecSQL(t, legacyPool, `insert into schema_migrations select unnest($1::text[])`, testkit.MigrationAllVersions)
	err = testkit.URLMigrator(t, legacy, docket.MigratorConfig{}).Migrate(testkit.Context(t), docket.MigrateAdopt, docket.MigrateOptions{})
	if !errors.Is(err, docket.ErrLedgerExists) || !strings.Contains(err.Error(), "in schema_migrations (an earlier release's ledger; `docket migrate up` copies them)") {
		t.Fatalf("adopt of a schema with an earlier release's ledger: %v", err)
	}
	if got := testkit.QueryInt64(t, legacyPool, `select count(*) from pg_tables where tablename = 'docket_schema_migrations'`); got != 0 {
		t.Fatal("a refused adopt created Docket's ledger")
	}
}

// adopt takes the schema's migration lock and writes the ledger in one
// transaction: it waits for a migrator holding the lock and creates no
// ledger meanwhile, and of two concurrent adopts one records the versions
// and the other finds them recorded.
func TestAdoptHoldsTheMigrationLockInOneTransaction(t *testing.T) {
	t.Parallel()
	databaseURL, pool := gooseApplied(t, migrationCount)
	ctx := testkit.Context(t)
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(ctx) }()
	if _, err := holder.Exec(ctx, `select pg_advisory_xact_lock(hashtextextended('docket.migrate.' || $1::text, 0))`, gooseSchema); err != nil {
		t.Fatal(err)
	}
	adopters := make([]*testPool, 2)
	for i := range adopters {
		p := testkit.Pool(t, testkit.PoolConfig(t, databaseURL, 1))
		adopters[i] = &testPool{pid: testkit.BackendPID(t, p), err: make(chan error, 1)}
		migrator := testkit.PoolMigrator(t, p, docket.MigratorConfig{Schema: gooseSchema})
		go func() {
			adopters[i].err <- migrator.Migrate(ctx, docket.MigrateAdopt, docket.MigrateOptions{})
		}()
	}
	for _, a := range adopters {
		testkit.MigrationAwaitLockWait(t, pool, a.pid)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from pg_tables where tablename = 'docket_schema_migrations'`); got != 0 {
		t.Fatal("adopt wrote the ledger while another migrator held the lock")
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, a := range adopters {
		errs = append(errs, <-a.err)
	}
	slices.SortFunc(errs, func(a, b error) int {
		if a == nil {
			return -1
		}
		if b == nil {
			return 1
		}
		return 0
	})
	if errs[0] != nil || !errors.Is(errs[1], docket.ErrLedgerExists) {
		t.Fatalf("two concurrent adopts returned %v", errs)
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: gooseSchema}, testkit.MigrationAllVersions...)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.docket_schema_migrations`); got != int64(migrationCount) {
		t.Fatalf("the ledger holds %d rows, want %d", got, migrationCount)
	}
}

// testPool is one adopter of TestAdoptHoldsTheMigrationLockInOneTransaction.
type testPool struct {
	pid uint32
	err chan error
}

package migration

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/invoices/store"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The generated repository in the app's own layout: goose applied Docket's
// files into schema docket and the app's own tables live in schema app; the
// app's pool resolves only app and public, and Docket's client has
// Config.Schema. In the app's own transaction, through Client.SchemaDB,
// every statement of package gen runs (the list is the generated query set,
// read by reflection), the app's own sqlc query joins docket_runs, the
// wake-up reaches a listening Worker at commit, and each write the database
// refuses comes back as the facade's typed error with nothing written; in
// every pgx execution mode and behind PgBouncer's transaction pooling.
func TestGeneratedRepositoryInTheAppsLayout(t *testing.T) {
	t.Parallel()
	// Behind PgBouncer the Worker listens on the direct pool: a
	// transaction pooler does not keep a LISTEN session.
	testkit.EveryAppPool(t, appLayoutDatabase, exerciseAppLayout)
}

// appLayoutDatabase is a database where goose applied Docket's files into
// schema docket and the example app's migration created its table in
// schema app.
func appLayoutDatabase(t *testing.T) string {
	t.Helper()
	databaseURL, owner := gooseAppliedIn(t, "docket", migrationCount)
	testkit.ExecSQL(t, owner, `create schema app; create table app.invoices (
		id bigint not null primary key, customer text not null, amount_cents bigint not null, run_id text unique)`)
	return databaseURL
}

// exerciseAppLayout runs the whole path on app, with the listening Worker
// on listen.
func exerciseAppLayout(t *testing.T, app, listen *pgxpool.Pool) {
	t.Helper()
	ctx := testkit.Context(t)
	cfg := testkit.TenantFairConfig(4)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, app, cfg)

	// A Worker that only a notification can wake in time: its poll is an
	// hour away.
	listening := make(chan struct{}, 1)
	started := make(chan string, 4)
	workerClient := testkit.OpenClient(t, listen, cfg)
	testkit.StartWorker(t, workerClient, docket.WorkerConfig{
		Concurrency:  1,
		PollInterval: time.Hour,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			started <- job.RunID
			return docket.Complete(nil)
		},
		OnEvent: func(e docket.WorkerEvent) {
			if e.Kind == docket.EventListening {
				select {
				case listening <- struct{}{}:
				default:
				}
			}
		},
	})
	select {
	case <-listening:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the Worker never listened")
	}

	// Through SchemaDB, and through the DBTX an app writes itself, which
	// only replaces each marker: the statements and the function bodies
	// they reach name Docket's objects by their own schema, and the
	// wake-up names the domain's channel.
	passes := []struct {
		name string
		db   func(tx pgx.Tx) gen.DBTX
	}{
		{"schemadb", func(tx pgx.Tx) gen.DBTX { return client.SchemaDB(tx) }},
		{"markers", func(tx pgx.Tx) gen.DBTX { return markerOnly{tx: tx} }},
	}
	for i, pass := range passes {
		tx, err := app.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		prefix := pass.name + "-"
		if _, err := tx.Exec(ctx, `insert into invoices (id, customer, amount_cents, run_id) values ($1, 'Ada', 1200, $2)`, i+1, prefix+"InsertRun"); err != nil {
			t.Fatal(err)
		}
		called := callEveryStatement(t, ctx, gen.New(pass.db(tx)), prefix)
		if called < 30 {
			t.Fatalf("%s: called %d statements of package gen, want every one of its query set", pass.name, called)
		}
		statuses, err := store.New(pass.db(tx)).InvoicesWithRunStatus(ctx, "acme")
		if err != nil || len(statuses) != i+1 || statuses[i].RunStatus == nil || *statuses[i].RunStatus != "running" {
			t.Fatalf("%s: the app's own query over docket_runs: %+v, %v", pass.name, statuses, err)
		}
		var path string
		if err := tx.QueryRow(ctx, `select current_setting('search_path')`).Scan(&path); err != nil || strings.ReplaceAll(path, " ", "") != "app,public" {
			t.Fatalf("%s: the app's search_path in its transaction = %q, %v", pass.name, path, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("%s: commit of the app's transaction: %v", pass.name, err)
		}
		// gen.InsertRun, gen.InsertRuns and gen.InsertUniqueRuns committed
		// three due runs; the wake-up at commit wakes the Worker, whose
		// poll is an hour away.
		for range 3 {
			select {
			case id := <-started:
				if id != prefix+"InsertRun" && id != prefix+"InsertRuns" && id != prefix+"InsertUniqueRuns" {
					t.Fatalf("%s: the Worker started %q", pass.name, id)
				}
			case <-time.After(testkit.WorkerDeadline):
				t.Fatalf("%s: the wake-up never reached the listening Worker", pass.name)
			}
		}
	}

	expectRefusedWrites(t, ctx, app, client)
}

// callEveryStatement calls every method of package gen's Queries that runs
// a statement, with arguments made from the parameter types, and fails on
// any error but an empty :one result. It returns how many it called.
func callEveryStatement(t *testing.T, ctx context.Context, q *gen.Queries, prefix string) int {
	t.Helper()
	v := reflect.ValueOf(q)
	called := 0
	for i := range v.NumMethod() {
		method := v.Type().Method(i)
		if method.Name == "WithTx" {
			continue
		}
		args := []reflect.Value{reflect.ValueOf(ctx)}
		for a := 2; a < method.Type.NumIn(); a++ {
			args = append(args, argumentFor(t, prefix+method.Name, method.Type.In(a), ""))
		}
		out := v.Method(i).Call(args)
		if err, _ := out[len(out)-1].Interface().(error); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("gen.%s in the app's transaction: %v", method.Name, err)
		}
		called++
	}
	return called
}

// argumentFor makes a valid argument of type typ for method: the tenant
// acme for every scope and tenant, the run id method, empty
// JSON documents, now for times, 10 for numbers, one element for slices.
func argumentFor(t *testing.T, method string, typ reflect.Type, field string) reflect.Value {
	t.Helper()
	value := reflect.New(typ).Elem()
	switch {
	case typ == reflect.TypeFor[time.Time]():
		value.Set(reflect.ValueOf(time.Now()))
	case typ.Kind() == reflect.String:
		switch {
		case strings.HasPrefix(field, "RunId") || field == "RunID":
			value.SetString(method)
		case strings.HasPrefix(field, "State") || field == "TraceContext":
			value.SetString("{}")
		case strings.HasPrefix(field, "Unique"):
			// No unique key: the unique runs' own test covers them.
		default:
			value.SetString("acme")
		}
	case typ.Kind() == reflect.Int32 || typ.Kind() == reflect.Int64 || typ.Kind() == reflect.Int:
		value.SetInt(10)
	case typ.Kind() == reflect.Bool:
	case typ.Kind() == reflect.Pointer:
		if field == "TenantID" {
			value.Set(argumentFor(t, method, typ.Elem(), field).Addr())
		}
	case typ.Kind() == reflect.Slice:
		value.Set(reflect.MakeSlice(typ, 1, 1))
		value.Index(0).Set(argumentFor(t, method, typ.Elem(), field))
	case typ.Kind() == reflect.Struct:
		for f := range typ.NumField() {
			value.Field(f).Set(argumentFor(t, method, typ.Field(f).Type, typ.Field(f).Name))
		}
	default:
		t.Fatalf("gen.%s takes a %s (%s), which this test cannot make", method, typ, field)
	}
	return value
}

// expectRefusedWrites inserts, with gen.InsertRun in the app's own
// transaction, each run the facade's checks refuse: the database refuses
// it too, docket.RunWriteError gives the facade's typed error, and nothing
// is written.
func expectRefusedWrites(t *testing.T, ctx context.Context, app *pgxpool.Pool, client *docket.Client) {
	t.Helper()
	tenant := func(id string) *string { return &id }
	var refusedBy []string
	valid := gen.InsertRunParams{RunID: "gen-bad", TenantID: tenant("acme"), GraphID: "g", GraphHash: "h1", State: "{}"}
	for _, c := range []struct {
		name string
		edit func(p *gen.InsertRunParams)
		want error
	}{
		{"tenantless under required tenancy", func(p *gen.InsertRunParams) { p.TenantID = nil }, docket.ErrTenantRequired},
		{"empty graph hash", func(p *gen.InsertRunParams) { p.GraphHash = "" }, docket.ErrInvalidArgument},
		{"run id with a newline", func(p *gen.InsertRunParams) { p.RunID = "gen-3\nx" }, docket.ErrInvalidArgument},
		{"blank run id", func(p *gen.InsertRunParams) { p.RunID = "   " }, docket.ErrInvalidArgument},
		{"run id over the limit", func(p *gen.InsertRunParams) { p.RunID = strings.Repeat("r", docket.MaxIdentifierBytes+1) }, docket.ErrInvalidArgument},
		{"blank tenant", func(p *gen.InsertRunParams) { p.TenantID = tenant(" ") }, docket.ErrInvalidArgument},
		{"tenant with a control character", func(p *gen.InsertRunParams) { p.TenantID = tenant("acme\u0085") }, docket.ErrInvalidArgument},
		{"blank graph id", func(p *gen.InsertRunParams) { p.GraphID = " " }, docket.ErrInvalidArgument},
		{"blank unique key", func(p *gen.InsertRunParams) { p.UniqueKey = tenant(" ") }, docket.ErrInvalidArgument},
		{"unique statuses without running", func(p *gen.InsertRunParams) {
			p.UniqueKey, p.UniqueStatuses = tenant("k"), []string{"waiting"}
		}, docket.ErrInvalidArgument},
		{"max attempts of 0", func(p *gen.InsertRunParams) { zero := int32(0); p.MaxAttempts = &zero }, docket.ErrInvalidArgument},
	} {
		before := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs`)
		params := valid
		c.edit(&params)
		err := pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
			_, err := gen.New(client.SchemaDB(tx)).InsertRun(ctx, params)
			return err
		})
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && !slices.Contains(refusedBy, pgErr.ConstraintName) {
			refusedBy = append(refusedBy, pgErr.ConstraintName)
		}
		if err := docket.RunWriteError(err); !errors.Is(err, c.want) {
			t.Errorf("%s: gen.InsertRun = %v, want %v", c.name, err, c.want)
		}
		if after := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs`); after != before {
			t.Errorf("%s: %d runs written", c.name, after-before)
		}
	}
	// The cases meet every identifier check of the schema, the max attempts
	// check, the tenancy trigger and the check of a unique run's statuses:
	// the identifier and max attempts checks are read from the catalog.
	rows, err := app.Query(ctx, `select conname::text from pg_constraint
		where conrelid = 'docket.docket_runs'::regclass
		  and (pg_get_constraintdef(oid) like '%octet_length%' or pg_get_constraintdef(oid) like '%max_attempts%')
		union all select 'docket_runs_tenant_required_check'
		union all select 'docket_runs_unique_check' order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	want, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(refusedBy)
	if !slices.Equal(refusedBy, want) {
		t.Errorf("the refused writes met %v, want every identifier check, the max attempts check, the tenancy trigger and the unique statuses check %v", refusedBy, want)
	}
}

// markerOnly is the DBTX an app can write itself: it replaces each
// /*schema*/ marker with the quoted schema docket and a dot, and changes
// nothing else (no search_path).
type markerOnly struct{ tx pgx.Tx }

func (m markerOnly) qualify(sql string) string {
	return strings.ReplaceAll(sql, "/*schema*/", `"docket".`)
}

func (m markerOnly) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return m.tx.Exec(ctx, m.qualify(sql), args...)
}

func (m markerOnly) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return m.tx.Query(ctx, m.qualify(sql), args...)
}

func (m markerOnly) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return m.tx.QueryRow(ctx, m.qualify(sql), args...)
}

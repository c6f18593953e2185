package worker

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A primary with a synchronous standby (built with pg_basebackup) crashes
// mid-drain (pg_ctl stop -m immediate) and the standby is promoted. The
// Worker's pool names both hosts with target_session_attrs=read-write: it
// resumes on the promoted standby, no commit it acknowledged is lost (every
// run has exactly one written verdict and one commit there), and every run
// finishes.
func TestWorkerSurvivesFailoverToASynchronousStandby(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	// The server binaries the suite runs on (pg_basebackup among them);
	// make test-pg leaves this test out, as fetched binaries lack it.
	primary, err := pglocal.Start(ctx, pglocal.Options{Version: os.Getenv(pgtest.EnvPGVersion),
		Settings: map[string]string{"synchronous_commit": "on"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	admin, err := pgx.Connect(ctx, primary.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `create database failover`); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close(ctx)
	testkit.MigrateOrFail(t, primary.URL("failover"), testkit.MigrateCall{})
	standby, err := primary.Standby(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	primaryPool := testkit.PoolFor(t, primary.URL("failover"))
	testkit.ExecSQL(t, primaryPool, `alter system set synchronous_standby_names = '*'`)
	testkit.ExecSQL(t, primaryPool, `select pg_reload_conf()`)
	// Wait until the standby confirms commits: from then on a commit that
	// answered is on the standby.
	deadline := time.Now().Add(testkit.WorkerDeadline)
	for testkit.QueryInt64(t, primaryPool, `select count(*) from pg_stat_replication where sync_state = 'sync'`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the standby never became synchronous")
		}
		testkit.ExecSQL(t, primaryPool, `select pg_stat_clear_snapshot()`)
	}

	both := fmt.Sprintf("postgres://%s@127.0.0.1:%d,127.0.0.1:%d/failover?sslmode=disable&target_session_attrs=read-write",
		pglocal.Superuser, primary.Port(), standby.Port())
	client := testkit.OpenClient(t, testkit.PoolFor(t, both), testkit.TenantFairConfig(4))
	runs := testkit.WorkerInsertRuns(t, client, 25, "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8")
	events := testkit.NewWorkerEvents()
	testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 4, ClaimTTL: 3 * time.Second, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result { return docket.Complete(nil) }})
	events.WaitFor(t, "a quarter of the runs completed", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerDistinctWritten(evs, "complete") >= len(runs)/4
	})
	if err := primary.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	events.WaitDone(t, len(runs))

	testkit.WorkerExpectWrittenOnce(t, events.All(), runs)
	promoted := testkit.PoolFor(t, standby.URL("failover"))
	if got := testkit.QueryInt64(t, promoted, `select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1`); got != int64(len(runs)) {
		t.Fatalf("%d of %d runs done by exactly one commit on the promoted standby", got, len(runs))
	}
}

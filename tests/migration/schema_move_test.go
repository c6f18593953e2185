package migration

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// domainSnapshot renders what a fairness domain remembers: the policy row
// with its cursor, every partition with its override and epoch, the ring
// positions with their counts, and every run with its claim and marker.
const domainSnapshot = `select concat_ws(' | ',
  (select format('mode=%s cap=%s cursor=%s version=%s', admission_mode, max_active, scan_ring_position, policy_version)
     from docket.docket_claim_policy),
  (select string_agg(format('%s cap=%s epoch=%s', scope_key, coalesce(max_active::text, '-'), admission_epoch), ', ' order by scope_key)
     from docket.docket_claim_partitions),
  (select string_agg(format('%s@%s unfinished=%s', scope_key, ring_position, unfinished_count), ', ' order by ring_position)
     from docket.docket_claim_schedule),
  (select string_agg(format('%s %s/%s %s claimed=%s admitted=%s seq=%s', id, coalesce(tenant_id, ''), run_id, status,
                            claim_token is not null, tenant_admitted_at is not null, checkpoint_seq), ', ' order by id)
     from docket.docket_runs),
  (select string_agg(version, ',' order by version) from docket.docket_schema_migrations))`

// pgTool finds a client program of the server's own version, next to its
// binaries. Debian's postgresql package has them; the other majors the
// test-pg legs fetch do not, so those legs leave this test out (Makefile).
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if local := pgtest.LocalServer(); local != nil {
		if path, err := exec.LookPath(filepath.Join(local.BinDir(), name)); err == nil {
			return path
		}
	}
	t.Fatalf("no %s of the server's version next to its binaries (Debian: the postgresql package of that major)", name)
	return ""
}

// A domain moves to another database unchanged: pg_dump of its one schema,
// pg_restore into an empty database, and the app's pool pointed there. Open
// accepts the restored schema (ledger, shape, function bodies), the
// cursor, ring positions, caps, epochs, runs and live claims are the same,
// a lease taken before the move commits after it, the sequences continue,
// and a Worker is woken by a notification on the new database.
func TestDomainMovesToAnotherDatabaseByDumpAndRestore(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	cfg := testkit.TenantFairConfig(2)
	cfg.Schema = "docket"

	sourceURL := pgtest.NewEmptyDatabase(t) // first: under -short it skips the database tests
	pgDump, pgRestore := pgTool(t, "pg_dump"), pgTool(t, "pg_restore")
	source := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, sourceURL, "app"))
	if err := testkit.PoolMigrator(t, source, docket.MigratorConfig{Schema: "docket"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := testkit.OpenClient(t, source, cfg)
	newRun := func(tenant, id string) docket.NewRun {
		return docket.NewRun{RunID: id, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}
	}
	if _, err := before.InsertRuns(ctx, []docket.NewRun{newRun("a", "a1"), newRun("a", "a2"), newRun("a", "a3"), newRun("b", "b1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := before.PutClaimPolicyOverride(ctx, docket.Tenant("b"), 1, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := before.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 2, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
	if err != nil || len(res.Leases) != 2 {
		t.Fatalf("ClaimDue before the move: %+v, %v", res, err)
	}
	done, carried := res.Leases[0], res.Leases[1]
	if _, err := before.Commit(ctx, docket.CommitRequest{Holder: done.Holder(), ExpectedSeq: done.CheckpointSeq, Step: 1,
		State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatal(err)
	}
	var snapshot string
	if err := source.QueryRow(ctx, domainSnapshot).Scan(&snapshot); err != nil {
		t.Fatal(err)
	}

	// The domain is stopped (nothing of it runs now); its schema alone moves.
	dump := filepath.Join(t.TempDir(), "docket.dump")
	if out, err := exec.CommandContext(ctx, pgDump, "--schema=docket", "--format=custom", "--file="+dump, sourceURL).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	targetURL := pgtest.NewEmptyDatabase(t)
	if out, err := exec.CommandContext(ctx, pgRestore, "--exit-on-error", "--dbname="+targetURL, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	target := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, targetURL, "app"))
	var moved string
	if err := target.QueryRow(ctx, domainSnapshot).Scan(&moved); err != nil {
		t.Fatal(err)
	}
	if moved != snapshot {
		t.Fatalf("after the move the domain is\n%s\nbefore it was\n%s", moved, snapshot)
	}

	after := testkit.OpenClient(t, target, cfg)
	run, err := after.Commit(ctx, docket.CommitRequest{Holder: carried.Holder(), ExpectedSeq: carried.CheckpointSeq, Step: 1,
		State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	if err != nil || run.Status != docket.StatusDone {
		t.Fatalf("committing a lease taken before the move: %+v, %v", run, err)
	}
	if _, err := after.InsertRun(ctx, newRun("c", "c1")); err != nil {
		t.Fatal(err)
	}
	if got := testkit.QueryInt64(t, target, `select id from docket.docket_runs where run_id = 'c1'`); got != 5 {
		t.Fatalf("the first run inserted after the move has id %d, want 5", got)
	}
	if got := testkit.QueryInt64(t, target, `select ring_position from docket.docket_claim_schedule where scope_key = 'c'`); got != 3 {
		t.Fatalf("the first partition created after the move has ring position %d, want 3", got)
	}

	// Drain the domain, then an idle Worker (polling hourly) is woken by the
	// notification of the next insert, on the new database's channel.
	rest, err := after.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 10, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
	if err != nil || len(rest.Leases) != 3 {
		t.Fatalf("ClaimDue after the move: %+v, %v; want the 3 runs still queued", rest, err)
	}
	for _, lease := range rest.Leases {
		if _, err := after.Commit(ctx, docket.CommitRequest{Holder: lease.Holder(), ExpectedSeq: lease.CheckpointSeq, Step: 1,
			State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan string, 1)
	w, runResult := testkit.StartIdleWorker(t, after, ran)
	if _, err := after.InsertRun(ctx, newRun("c", "c2")); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != "c2" {
			t.Fatalf("the worker ran %s, want c2", id)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the idle worker on the new database was not woken by the insert's notification")
	}
	testkit.StopWorker(t, w, runResult)
	moveCheckSourceUntouched(t, source, snapshot)
}

// moveCheckSourceUntouched fails when the move changed the source domain.
func moveCheckSourceUntouched(t *testing.T, source *pgxpool.Pool, snapshot string) {
	t.Helper()
	var now string
	if err := source.QueryRow(testkit.Context(t), domainSnapshot).Scan(&now); err != nil || now != snapshot {
		t.Fatalf("the source domain after the move is %q (%v), want it unchanged", now, err)
	}
}

package lifecycle

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// finished inserts a run of tenant and finishes it with status at
// testkit.RetentionCutoff plus offset.
func finished(s *testkit.RunStore, tenant, runID, status string, offset time.Duration) {
	s.T.Helper()
	s.Insert(tenant, runID)
	testkit.RetryFinish(s.T, s.Pool, runID, status, testkit.RetentionCutoff.Add(offset))
}

// batch is one OnBatch call and the runs left when it was made.
type batch struct {
	deleted, total int64
	left           []string
}

// Retention deletes exactly the done, failed and cancelled runs finished
// strictly before the cutoff, oldest first, in batches, and nothing else: no
// unfinished run, no partition, no schedule row, no ring position and no
// counter changes, even for a scope whose runs are all gone. A scoped call
// deletes that scope's runs only.
func TestDeleteFinishedRunsDeletesExactlyTheFinishedRunsBeforeTheCutoff(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	s.Insert("c", "c-claimed")
	s.Claim("c", "c-claimed")
	finished(s, "a", "a-old-1", "done", -9*time.Minute)
	finished(s, "a", "a-old-2", "failed", -8*time.Minute)
	finished(s, "b", "b-old-1", "cancelled", -7*time.Minute)
	finished(s, "b", "b-old-2", "cancelled", -6*time.Minute)
	finished(s, "a", "a-old-3", "done", -5*time.Minute)
	finished(s, "gone", "g-old-1", "done", -4*time.Minute)
	finished(s, "gone", "g-old-2", "failed", -3*time.Minute)
	finished(s, "b", "b-old-3", "failed", -time.Minute)
	finished(s, "a", "a-at-cutoff", "done", 0)
	finished(s, "d", "d-late", "done", time.Minute)
	s.Insert("a", "a-queued")
	s.Insert("b", "b-wait")
	testkit.ExecSQL(t, s.Pool, `update docket_runs set status = 'waiting', wake_at = null where run_id = 'b-wait'`)
	ring := testkit.RetryRing(t, s.Pool)
	testkit.RetryExpectRing(t, s.Pool, ring)
	kept := []string{"a-at-cutoff", "a-queued", "b-wait", "c-claimed", "d-late"}

	var batches []batch
	total, err := s.Client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{
		FinishedBefore: testkit.RetentionCutoff, BatchSize: 3,
		OnBatch: func(deleted, total int64) {
			batches = append(batches, batch{deleted, total, testkit.RetryRunIDs(t, s.Pool)})
		},
	})
	if err != nil || total != 8 {
		t.Fatalf("DeleteFinishedRuns = %d, %v; want 8", total, err)
	}
	want := []batch{
		{3, 3, sortedIDs(kept, "a-old-3", "b-old-2", "b-old-3", "g-old-1", "g-old-2")},
		{3, 6, sortedIDs(kept, "b-old-3", "g-old-2")},
		{2, 8, sortedIDs(kept)},
	}
	if len(batches) != len(want) {
		t.Fatalf("batches %+v, want %+v", batches, want)
	}
	for i := range want {
		if batches[i].deleted != want[i].deleted || batches[i].total != want[i].total || !slices.Equal(batches[i].left, want[i].left) {
			t.Fatalf("batch %d = %+v, want %+v", i+1, batches[i], want[i])
		}
	}
	testkit.RetryExpectRing(t, s.Pool, ring)

	batches = nil
	total, err = s.Client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: 3,
		OnBatch: func(deleted, total int64) { batches = append(batches, batch{deleted: deleted, total: total}) }})
	if err != nil || total != 0 || len(batches) != 1 || batches[0].deleted != 0 {
		t.Fatalf("second call = %d, %v, batches %+v; want one empty batch", total, err, batches)
	}

	scope := docket.Tenant("a")
	total, err = s.Client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff.Add(time.Hour), Scope: &scope})
	if err != nil || total != 1 {
		t.Fatalf("scoped call = %d, %v; want 1", total, err)
	}
	if got := testkit.RetryRunIDs(t, s.Pool); !slices.Equal(got, []string{"a-queued", "b-wait", "c-claimed", "d-late"}) {
		t.Fatalf("runs after the scoped call: %v", got)
	}
	testkit.RetryExpectRing(t, s.Pool, ring)
}

// sortedIDs returns the union of ids and more, sorted.
func sortedIDs(ids []string, more ...string) []string {
	out := append(slices.Clone(ids), more...)
	slices.Sort(out)
	return out
}

// Invalid options are refused with typed errors before anything is deleted,
// and a context that ends stops the deletion between batches: the batches
// already committed stay deleted and are counted.
func TestDeleteFinishedRunsValidatesInputAndHonoursTheContext(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	for _, id := range []string{"f-1", "f-2", "f-3", "f-4", "f-5"} {
		finished(s, "acme", id, "done", -time.Hour)
	}
	all := testkit.RetryRunIDs(t, s.Pool)
	tenantless, empty := docket.Tenantless, docket.Tenant("")
	refusals := []struct {
		what   string
		opts   docket.DeleteFinishedRunsOptions
		target error
	}{
		{"no cutoff", docket.DeleteFinishedRunsOptions{}, docket.ErrInvalidArgument},
		{"cutoff past timestamptz", docket.DeleteFinishedRunsOptions{FinishedBefore: time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC)}, docket.ErrInvalidArgument},
		{"cutoff before timestamptz", docket.DeleteFinishedRunsOptions{FinishedBefore: time.Date(-4713, 11, 23, 0, 0, 0, 0, time.UTC)}, docket.ErrInvalidArgument},
		{"negative batch", docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: -1}, docket.ErrInvalidArgument},
		{"batch over the limit", docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: docket.MaxRetentionBatch + 1}, docket.ErrInvalidArgument},
		{"empty tenant", docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, Scope: &empty}, docket.ErrInvalidArgument},
		{"tenantless under required tenancy", docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, Scope: &tenantless}, docket.ErrTenantRequired},
	}
	for _, r := range refusals {
		total, err := s.Client.DeleteFinishedRuns(testkit.Context(t), r.opts)
		testkit.ExpectErrorIs(t, r.what, err, r.target)
		if total != 0 || !slices.Equal(testkit.RetryRunIDs(t, s.Pool), all) {
			t.Fatalf("%s deleted runs (total %d)", r.what, total)
		}
	}

	cancelled, cancel := context.WithCancel(testkit.Context(t))
	cancel()
	total, err := s.Client.DeleteFinishedRuns(cancelled, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff})
	testkit.ExpectErrorIs(t, "a cancelled context", err, context.Canceled)
	if total != 0 || !slices.Equal(testkit.RetryRunIDs(t, s.Pool), all) {
		t.Fatalf("a cancelled context deleted runs (total %d)", total)
	}

	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	total, err = s.Client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: 2,
		OnBatch: func(int64, int64) { cancel() }})
	testkit.ExpectErrorIs(t, "a context cancelled after the first batch", err, context.Canceled)
	if total != 2 || !slices.Equal(testkit.RetryRunIDs(t, s.Pool), []string{"f-3", "f-4", "f-5"}) {
		t.Fatalf("after a cancel between batches: total %d, runs %v; want 2 and f-3..f-5", total, testkit.RetryRunIDs(t, s.Pool))
	}

	total, err = s.Client.DeleteFinishedRuns(testkit.Context(t), docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff})
	if err != nil || total != 3 || len(testkit.RetryRunIDs(t, s.Pool)) != 0 {
		t.Fatalf("default batch = %d, %v; want the 3 remaining runs deleted", total, err)
	}
}

// Retention racing claims: while a claim transaction is open (holding the
// policy row, the partition and its leased run) and another transaction
// holds a finished run, retention completes without waiting, deletes every
// other finished run and skips the held one, which a later call deletes.
// While a retention batch is open in its own transaction, a claim call
// leases at once.
func TestDeleteFinishedRunsSkipsLockedRowsAndNeverBlocksClaims(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	s.Insert("acme", "r-1")
	s.Insert("acme", "r-2")
	for _, id := range []string{"f-1", "f-2", "f-3", "f-4"} {
		finished(s, "acme", id, "failed", -time.Hour)
	}
	finished(s, "beta", "f-5", "cancelled", -time.Hour)
	ring := testkit.RetryRing(t, s.Pool)

	claimTx, err := s.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = claimTx.Rollback(ctx) }()
	res, err := s.Client.ClaimDueTx(ctx, claimTx, docket.ClaimRequest{Now: s.DbNow(), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 100})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "r-1" {
		t.Fatalf("claim in the open transaction = %+v, %v", res, err)
	}
	e := &testkit.ClaimEnv{T: t, Pool: s.Pool, Client: s.Client}
	release := e.HoldRun("f-2")

	// A retention that waited on either transaction would fail at this
	// deadline instead of hanging.
	bounded, cancel := context.WithTimeout(ctx, testkit.WorkerDeadline)
	defer cancel()
	total, err := s.Client.DeleteFinishedRuns(bounded, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: 2})
	if err != nil || total != 4 {
		t.Fatalf("retention beside the open transactions = %d, %v; want 4", total, err)
	}
	if got := testkit.RetryRunIDs(t, s.Pool); !slices.Equal(got, []string{"f-2", "r-1", "r-2"}) {
		t.Fatalf("runs after retention: %v, want the held f-2 and the running runs", got)
	}
	if err := claimTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	release()
	if total, err := s.Client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff}); err != nil || total != 1 {
		t.Fatalf("retention after the lock was released = %d, %v; want 1", total, err)
	}
	// Only the grant advanced acme's epoch.
	ring[0].Epoch++
	testkit.RetryExpectRing(t, s.Pool, ring)

	finished(s, "acme", "f-6", "done", -time.Hour)
	retentionTx, err := s.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = retentionTx.Rollback(ctx) }()
	deleted, err := dbgen.New(retentionTx).DeleteFinishedRuns(ctx, dbgen.DeleteFinishedRunsParams{FinishedBefore: testkit.RetentionCutoff, BatchSize: 10, Statuses: []string{"done", "failed", "cancelled"}})
	if err != nil || deleted != 1 {
		t.Fatalf("open retention batch = %d, %v; want 1", deleted, err)
	}
	res, err = s.Client.ClaimDue(bounded, docket.ClaimRequest{Now: s.DbNow(), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 100})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "r-2" {
		t.Fatalf("claim beside the open retention batch = %+v, %v", res, err)
	}
	if err := retentionTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.RetryRunIDs(t, s.Pool); !slices.Equal(got, []string{"r-1", "r-2"}) {
		t.Fatalf("runs at the end: %v", got)
	}
	ring[0].Epoch++
	testkit.RetryExpectRing(t, s.Pool, ring)
}

// The retention batch reads docket_runs_finished_idx in order and stops at
// the batch size, in a custom and in a generic plan, for every status and
// for one (no sort), and finds the rows it deletes by primary key: no
// sequential scan of docket_runs, on 60,000 runs of which most are
// finished. A scoped batch may read the scope's index instead.
func TestDeleteFinishedRunsPlanReadsTheRetentionIndex(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, finished_at)
		select format('r-%s', g), format('t%s', g % 200), 'g', 'h',
		       case g % 10 when 0 then 'running' when 1 then 'failed' when 2 then 'cancelled' else 'done' end, '{}',
		       case when g % 10 = 0 then now() end,
		       case when g % 10 <> 0 then now() - make_interval(secs => g) end
		  from generate_series(1, 60000) g`)
	testkit.ExecSQL(t, pool, `analyze docket_runs`)
	ctx := testkit.Context(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	cutoff := time.Now().Add(-time.Hour)
	all, done := []string{"done", "failed", "cancelled"}, []string{"done"}
	scope := "t7"
	for _, mode := range []string{"auto", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "set plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for name, args := range map[string][]any{
			"every status":          {all, cutoff, nil, 1000},
			"one status":            {done, cutoff, nil, 1000},
			"one status of a scope": {done, cutoff, &scope, 1000},
		} {
			if _, err := conn.Exec(ctx, "prepare retention_plan (text[], timestamptz, text, integer) as "+dbgen.DeleteFinishedRuns); err != nil {
				t.Fatal(err)
			}
			// EXPLAIN EXECUTE takes no bind parameters: the values go in as
			// literals, quoted by the server.
			var values string
			if err := conn.QueryRow(ctx, `select format('(%L::text[], %L::timestamptz, %L::text, %L::integer)', $1::text[], $2::timestamptz, $3::text, $4::integer)`,
				args...).Scan(&values); err != nil {
				t.Fatal(err)
			}
			var plan string
			err := conn.QueryRow(ctx, "explain (format json) execute retention_plan"+values).Scan(&plan)
			if _, derr := conn.Exec(ctx, "deallocate retention_plan"); derr != nil {
				t.Fatal(derr)
			}
			if err != nil {
				t.Fatalf("%s, %s: %v", mode, name, err)
			}
			if strings.Contains(plan, `"Node Type": "Seq Scan"`) {
				t.Errorf("%s, %s: the batch scans docket_runs:\n%s", mode, name, plan)
			}
			// A scope's few runs may come from its own index instead.
			if args[2] == nil && (!strings.Contains(plan, `"Index Name": "docket_runs_finished_idx"`) || strings.Contains(plan, `"Node Type": "Sort"`)) {
				t.Errorf("%s, %s: the batch does not read docket_runs_finished_idx in order:\n%s", mode, name, plan)
			}
		}
	}
}

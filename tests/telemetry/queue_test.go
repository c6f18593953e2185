package telemetry

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// queueSince is the fixed wake time the queue scenario's due runs count
// their age from: long before the database clock.
var queueSince = time.Date(2021, 3, 1, 12, 0, 0, 0, time.UTC)

// queueDomain is a TenantFair client (cap 1 per tenant) in its own schema of
// a database, whose metrics go to provider.
func queueDomain(t *testing.T, databaseURL, schema string, provider *sdkmetric.MeterProvider) (*docket.Client, *pgxpool.Pool) {
	t.Helper()
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: schema})
	pool := testkit.PoolFor(t, databaseURL)
	cfg := testkit.TenantFairConfig(1)
	cfg.Schema = schema
	cfg.MeterProvider = provider
	return testkit.OpenClient(t, pool, cfg), pool
}

// The queue gauges of a domain in a schema of its own (Config.Schema):
// the count of every phase they cover, exact, and the ages of the oldest
// queued and oldest ready run, from those runs' wake times to the database
// clock of the collection; waiting, poisoned and finished runs are not
// counted; a second, empty domain on the same provider reports zeros under
// its own name; and no identity becomes an attribute.
func TestTelemetryQueueGauges(t *testing.T) {
	ctx := testkit.Context(t)
	databaseURL := pgtest.NewEmptyDatabase(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	client, pool := queueDomain(t, databaseURL, "queue_busy", provider)
	queueDomain(t, databaseURL, "queue_idle", provider)

	insert := func(tenant, runID string, wake time.Time) {
		t.Helper()
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: graph, GraphHash: hash,
			State: json.RawMessage(`{}`), WakeAt: wake}); err != nil {
			t.Fatalf("insert %s: %v", runID, err)
		}
	}
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	// Tenant a: a1 is leased below (executing); a2 to a4 wait behind a
	// cap of one (queued), a2 the oldest since queueSince.
	insert("qa", "q-a1", queueSince)
	insert("qa", "q-a2", queueSince.Add(time.Minute))
	insert("qa", "q-a3", queueSince.Add(2*time.Minute))
	insert("qa", "q-a4", queueSince.Add(3*time.Minute))
	// b1 is leased and released (ready), e1 fails an attempt (retrying),
	// f1 parks for an external event (waiting), g1 finishes (done).
	insert("qb", "q-b1", queueSince)
	insert("qe", "q-e1", queueSince)
	insert("qf", "q-f1", queueSince)
	insert("qg", "q-g1", queueSince)
	// c1 and c2 belong to a paused tenant, d1 and d2 are due in 2100.
	insert("qc", "q-c1", queueSince)
	insert("qc", "q-c2", queueSince)
	insert("qd", "q-d1", future)
	insert("qd", "q-d2", future)
	if _, err := client.PauseTenant(ctx, docket.Tenant("qc"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("pause: %v", err)
	}
	res, err := client.ClaimDue(ctx, docket.ClaimRequest{Now: queueSince.Add(time.Hour), Limit: 10, ClaimTTL: time.Hour, MaxClaimAttempts: 1000})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	leases := map[string]docket.Lease{}
	for _, l := range res.Leases {
		leases[l.RunID] = l
	}
	if got := strings.Join(sortedKeys(leases), ","); got != "q-a1,q-b1,q-e1,q-f1,q-g1" || len(res.Poisoned) != 0 {
		t.Fatalf("claim leased %s (poisoned %d), want q-a1,q-b1,q-e1,q-f1,q-g1", got, len(res.Poisoned))
	}
	if released, err := client.ReleaseClaim(ctx, leases["q-b1"].Holder()); err != nil || !released {
		t.Fatalf("release b1: %t %v", released, err)
	}
	commit := func(runID string, req docket.CommitRequest) {
		t.Helper()
		req.Holder, req.ExpectedSeq = leases[runID].Holder(), leases[runID].CheckpointSeq
		if _, err := client.Commit(ctx, req); err != nil {
			t.Fatalf("commit %s: %v", runID, err)
		}
	}
	commit("q-e1", docket.CommitRequest{Disposition: docket.ReleaseAt(future), Attempt: docket.AttemptCount,
		Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: "boom"}})
	commit("q-f1", docket.CommitRequest{Disposition: docket.ReleaseExternal()})
	commit("q-g1", docket.CommitRequest{Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	b1, err := client.FetchRun(ctx, docket.Tenant("qb"), "q-b1")
	if err != nil || b1.Phase != docket.PhaseReady || b1.WakeAt == nil {
		t.Fatalf("b1 after its release: %+v, %v", b1, err)
	}
	readySince := *b1.WakeAt

	dbNow := func() time.Time {
		t.Helper()
		var now time.Time
		if err := pool.QueryRow(ctx, `select now()`).Scan(&now); err != nil {
			t.Fatalf("now: %v", err)
		}
		return now
	}
	before := dbNow()
	got := testkit.TelemetryCollect(t, ctx, reader)
	after := dbNow()

	shape := map[string]string{}
	for name, kind := range got.Shape {
		if strings.HasPrefix(name, "docket.queue.") {
			shape[name] = kind
		}
	}
	if want := map[string]string{"docket.queue.runs": "gauge {run}", "docket.queue.oldest_queued_age": "gauge s",
		"docket.queue.oldest_ready_age": "gauge s"}; !maps.Equal(shape, want) {
		t.Errorf("queue instruments %v, want %v", shape, want)
	}
	runs := func(domain, phase string) string { return testkit.TelemetryAttrs("domain", domain, "phase", phase) }
	got.ExpectPoints(t, "docket.queue.runs", testkit.TelemetryPoints{
		runs("queue_busy", "queued"): 3, runs("queue_busy", "ready"): 1, runs("queue_busy", "paused"): 2,
		runs("queue_busy", "retrying"): 1, runs("queue_busy", "scheduled"): 2, runs("queue_busy", "executing"): 1,
		runs("queue_idle", "queued"): 0, runs("queue_idle", "ready"): 0, runs("queue_idle", "paused"): 0,
		runs("queue_idle", "retrying"): 0, runs("queue_idle", "scheduled"): 0, runs("queue_idle", "executing"): 0,
	})

	// The gauges count exactly what docket_run_phase says, phase by phase.
	counts := sameAsRunPhases(t, client, got)
	if counts.Phases[docket.PhaseWaiting] != 1 || counts.Phases[docket.PhaseDone] != 1 {
		t.Errorf("the uncounted phases hold %v, want one waiting and one done run", counts.Phases)
	}

	// Ages: from the oldest wake time to the collection's database clock,
	// which lies between the two reads around it.
	expectAge := func(name string, since time.Time) {
		t.Helper()
		age := got.Gauges[name][testkit.TelemetryAttrs("domain", "queue_busy")]
		low, high := before.Sub(since).Seconds(), after.Sub(since).Seconds()
		if age < low || age > high {
			t.Errorf("%s = %.6f s, want within [%.6f, %.6f] (since %s)", name, age, low, high, since.Format(time.RFC3339Nano))
		}
		if idle, ok := got.Gauges[name][testkit.TelemetryAttrs("domain", "queue_idle")]; !ok || idle != 0 {
			t.Errorf("%s of the idle domain = %v (reported %t), want 0", name, idle, ok)
		}
	}
	expectAge("docket.queue.oldest_queued_age", queueSince.Add(time.Minute))
	expectAge("docket.queue.oldest_ready_age", readySince)
	if len(got.Gauges["docket.queue.oldest_queued_age"]) != 2 || len(got.Gauges["docket.queue.oldest_ready_age"]) != 2 {
		t.Errorf("age series %v, want one per domain", got.Gauges)
	}

	// Only the domain and the phase: no tenant, run or graph.
	identities := []string{graph, hash, "qa", "qb", "qc", "qd", "qe", "qf", "qg"}
	for _, l := range leases {
		identities = append(identities, l.RunID, l.ClaimToken.String())
	}
	expectNoIdentity(t, got, identities)

	// A paused domain's unclaimed runs are all paused: nothing is queued
	// or ready, so neither age grows while the pause lasts.
	if _, err := client.PauseDomain(ctx, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("pause domain: %v", err)
	}
	paused := testkit.TelemetryCollect(t, ctx, reader)
	busy := func(phase string) string { return runs("queue_busy", phase) }
	if want := (testkit.TelemetryPoints{busy("queued"): 0, busy("ready"): 0, busy("paused"): 9, busy("retrying"): 0,
		busy("scheduled"): 0, busy("executing"): 1}); !maps.Equal(testkit.WorkerTelemetryPoints(paused, "docket.queue.runs", "domain=queue_busy,"), want) {
		t.Errorf("paused domain: %v, want %v", testkit.SortedPoints(paused.Points["docket.queue.runs"]), testkit.SortedPoints(want))
	}
	sameAsRunPhases(t, client, paused)
	for _, name := range []string{"docket.queue.oldest_queued_age", "docket.queue.oldest_ready_age"} {
		if age := paused.Gauges[name][testkit.TelemetryAttrs("domain", "queue_busy")]; age != 0 {
			t.Errorf("%s of the paused domain = %v, want 0", name, age)
		}
	}
}

// A client whose pool was closed reports no queue gauges, and no error at
// each collection: the gauges of another domain on the same provider are
// still collected.
func TestTelemetryQueueGaugesOfAClosedPool(t *testing.T) {
	ctx := testkit.Context(t)
	databaseURL := pgtest.NewEmptyDatabase(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	_, gone := queueDomain(t, databaseURL, "queue_gone", provider)
	queueDomain(t, databaseURL, "queue_kept", provider)
	gone.Close()
	got := testkit.TelemetryCollect(t, ctx, reader)
	if n := len(testkit.WorkerTelemetryPoints(got, "docket.queue.runs", "domain=queue_gone,")); n != 0 {
		t.Errorf("the closed client's domain reported %d queue points, want none", n)
	}
	if n := len(testkit.WorkerTelemetryPoints(got, "docket.queue.runs", "domain=queue_kept,")); n != len(queuePhasesShown) {
		t.Errorf("the open client's domain reported %d queue points, want %d", n, len(queuePhasesShown))
	}
}

// queuePhasesShown are the phases docket.queue.runs reports per domain.
var queuePhasesShown = []string{"queued", "ready", "paused", "retrying", "scheduled", "executing"}

// sameAsRunPhases requires the queue_busy domain's docket.queue.runs points
// of got to equal what CountRunPhases reads through docket_run_phase, and
// returns those counts.
func sameAsRunPhases(t *testing.T, client *docket.Client, got testkit.TelemetryCollected) docket.RunPhaseCounts {
	t.Helper()
	counts, err := client.CountRunPhases(testkit.Context(t), docket.CountRunPhasesRequest{})
	if err != nil {
		t.Fatalf("count run phases: %v", err)
	}
	for _, phase := range []docket.RunPhase{docket.PhaseQueued, docket.PhaseReady, docket.PhasePaused, docket.PhaseRetrying, docket.PhaseScheduled, docket.PhaseExecuting} {
		key := testkit.TelemetryAttrs("domain", "queue_busy", "phase", string(phase))
		if gauge := got.Points["docket.queue.runs"][key]; gauge != counts.Phases[phase] {
			t.Errorf("phase %s: gauge %d, CountRunPhases %d", phase, gauge, counts.Phases[phase])
		}
	}
	return counts
}

// sortedKeys lists the keys of m in order.
func sortedKeys(m map[string]docket.Lease) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The queue gauges' statement reads the running runs through the claim
// indexes, never every run: on a domain whose history holds 20,000
// finished runs next to 300 running ones, its plan scans
// docket_runs_ready_idx and docket_runs_expired_idx and no sequential scan
// of docket_runs.
func TestTelemetryQueueGaugesPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, finished_at)
		select 'done-' || i, 't' || (i % 50), 'g', 'h', '{}', 'done', now() from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		select 'due-' || i, 't' || (i % 50), 'g', 'h', '{}', 'running', now() - interval '1 hour' from generate_series(1, 300) i`)
	testkit.ExecSQL(t, pool, `analyze`)
	var plan string
	if err := pool.QueryRow(ctx, "explain (format json) "+gen.QueueGauges).Scan(&plan); err != nil {
		t.Fatalf("explain: %v", err)
	}
	nodes := strings.Join(testkit.PlanNodes(t, plan), ", ")
	if !strings.Contains(nodes, "on docket_runs_ready_idx") || !strings.Contains(nodes, "on docket_runs_expired_idx") ||
		strings.Contains(nodes, "Seq Scan on docket_runs") {
		t.Errorf("queue gauges plan: %s", nodes)
	}
}

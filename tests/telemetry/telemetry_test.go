package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The identities of the telemetry scenario. None of them may appear as an
// attribute value.
const (
	tenantA = "tm-tenant-a"
	tenantB = "tm-tenant-b"
	graph   = "tm-graph"
	hash    = "tm-hash-v1"
	missing = "tm-run-missing"
)

// base is the scenario's claim clock; runs are due shortly before it.
var base = time.Date(2030, 6, 1, 8, 0, 0, 0, time.UTC)

// metricsEnv is a TenantFair client whose metrics go to a manual reader.
type metricsEnv struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	client *docket.Client
	reader *sdkmetric.ManualReader
	// tokens collects every claim token the scenario saw.
	tokens []string
}

// newTMEnv opens a TenantFair client (cap 2) with a manual-reader provider.
func newTMEnv(t *testing.T) *metricsEnv {
	t.Helper()
	pool := testkit.NewPool(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(2)
	cfg.MeterProvider = provider
	return &metricsEnv{t: t, ctx: testkit.Context(t), pool: pool, client: testkit.OpenClient(t, pool, cfg), reader: reader}
}

// insert adds a run of tenant due at wake.
func (e *metricsEnv) insert(tenant, runID string, wake time.Time) {
	e.t.Helper()
	if _, err := e.client.InsertRun(e.ctx, docket.NewRun{
		RunID: runID, Scope: docket.Tenant(tenant), GraphID: graph, GraphHash: hash,
		State: json.RawMessage(`{}`), WakeAt: wake,
	}); err != nil {
		e.t.Fatalf("insert %s: %v", runID, err)
	}
}

// outcome is an expected claim outcome.
type outcome struct {
	runID    string
	class    docket.WorkClass
	poisoned bool
}

// claim runs one claim call and fails unless its outcomes are exactly want
// (in any order); it returns the leases by run id.
func (e *metricsEnv) claim(now time.Time, limit int, pref docket.Preference, maxAttempts int, want ...outcome) map[string]docket.Lease {
	e.t.Helper()
	res, err := e.client.ClaimDue(e.ctx, docket.ClaimRequest{
		Now: now, Limit: limit, ClaimTTL: time.Hour, MaxClaimAttempts: maxAttempts, Preference: pref,
	})
	if err != nil {
		e.t.Fatalf("claim at %s: %v", now, err)
	}
	var got []outcome
	leases := map[string]docket.Lease{}
	for _, l := range res.Leases {
		got = append(got, outcome{l.RunID, l.Class, false})
		leases[l.RunID] = l
		e.tokens = append(e.tokens, l.ClaimToken.String())
	}
	for _, p := range res.Poisoned {
		got = append(got, outcome{p.RunID, p.Class, true})
	}
	key := func(o outcome) string { return fmt.Sprintf("%s/%s/%t", o.runID, o.class, o.poisoned) }
	gotKeys, wantKeys := make([]string, len(got)), make([]string, len(want))
	for i, o := range got {
		gotKeys[i] = key(o)
	}
	for i, o := range want {
		wantKeys[i] = key(o)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	if !slices.Equal(gotKeys, wantKeys) {
		e.t.Fatalf("claim at %s: outcomes %v, want %v", now, gotKeys, wantKeys)
	}
	return leases
}

// commit commits a holder's checkpoint and returns the new sequence.
func (e *metricsEnv) commit(h docket.Holder, seq int64, s docket.Disposition) int64 {
	e.t.Helper()
	run, err := e.client.Commit(e.ctx, docket.CommitRequest{Holder: h, ExpectedSeq: seq, Disposition: s})
	if err != nil {
		e.t.Fatalf("commit %s: %v", h.RunID, err)
	}
	return run.CheckpointSeq
}

// abandon abandons a claim and fails unless the outcome is want.
func (e *metricsEnv) abandon(req docket.AbandonRequest, want docket.AbandonOutcome) {
	e.t.Helper()
	res, err := e.client.AbandonClaim(e.ctx, req)
	if err != nil || res.Outcome != want {
		e.t.Fatalf("abandon %s: outcome %q, error %v; want %q", req.Holder.RunID, res.Outcome, err, want)
	}
}

// TestTelemetryScriptedScenario drives two tenants through claims, commits
// of every schedule, a steal, two poisons, a policy-cursor contention,
// abandons, releases, cancels and reads, then checks every data point of
// every instrument, and that no identity became an attribute value.
func TestTelemetryScriptedScenario(t *testing.T) {
	e := newTMEnv(t)
	ctx := e.ctx
	a, b := docket.Tenant(tenantA), docket.Tenant(tenantB)
	qr, ex := docket.ClassQueuedReady, docket.ClassExpired

	// Five runs; one tenantless insert refused under required tenancy.
	e.insert(tenantA, "tm-run-a1", base.Add(-5*time.Minute))
	e.insert(tenantA, "tm-run-a2", base.Add(-4*time.Minute))
	e.insert(tenantA, "tm-run-a3", base.Add(-3*time.Minute))
	e.insert(tenantB, "tm-run-b1", base.Add(-2*time.Minute))
	e.insert(tenantB, "tm-run-b2", base.Add(-1*time.Minute))
	_, err := e.client.InsertRun(ctx, docket.NewRun{RunID: "tm-run-x", GraphID: graph, GraphHash: hash, State: json.RawMessage(`{}`)})
	testkit.ExpectErrorIs(t, "tenantless insert", err, docket.ErrTenantRequired)

	// Claim 1: cap 2 promotes the two FIFO heads of each tenant.
	l1 := e.claim(base, 10, docket.PreferNone, 1000,
		outcome{"tm-run-a1", qr, false}, outcome{"tm-run-a2", qr, false},
		outcome{"tm-run-b1", qr, false}, outcome{"tm-run-b2", qr, false})

	// Commits of every schedule; retain and yield keep a1's marker.
	a1 := l1["tm-run-a1"]
	seq := e.commit(a1.Holder(), a1.CheckpointSeq, docket.RetainClaim())
	e.commit(a1.Holder(), seq, docket.ReleaseImmediate())
	a2 := l1["tm-run-a2"]
	e.commit(a2.Holder(), a2.CheckpointSeq, docket.ReleaseAt(base.Add(time.Hour)))
	b1 := l1["tm-run-b1"]
	e.commit(b1.Holder(), b1.CheckpointSeq, docket.ReleaseExternal())
	b2 := l1["tm-run-b2"]
	e.commit(b2.Holder(), b2.CheckpointSeq, docket.ReleaseTerminal(docket.StatusDone))
	_, err = e.client.Commit(ctx, docket.CommitRequest{Holder: b2.Holder(), ExpectedSeq: b2.CheckpointSeq, Disposition: docket.RetainClaim()})
	testkit.ExpectErrorIs(t, "stale commit", err, docket.ErrStaleFence)

	// Claim 2: demand one prefers expired work, finds none and falls back
	// to reacquiring admitted-ready a1.
	a1r := e.claim(base.Add(time.Second), 1, docket.PreferExpired, 1000,
		outcome{"tm-run-a1", docket.ClassAdmittedReady, false})["tm-run-a1"]

	// Claim 3: a1's claim expired; it is stolen, keeping its admission.
	a1s := e.claim(base.Add(2*time.Hour), 1, docket.PreferExpired, 1000,
		outcome{"tm-run-a1", ex, false})["tm-run-a1"]
	if _, err := e.client.RefreshClaim(ctx, a1s.Holder()); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	_, err = e.client.RefreshClaim(ctx, a1r.Holder())
	testkit.ExpectErrorIs(t, "refresh of the stolen claim", err, docket.ErrClaimLost)
	if released, err := e.client.ReleaseClaim(ctx, a1.Holder()); err != nil || released {
		t.Fatalf("stale release: released %t, error %v", released, err)
	}

	// Claim 4: the admitted expired a1 reached MaxClaimAttempts: poison,
	// which releases its marker.
	e.claim(base.Add(4*time.Hour), 1, docket.PreferNone, 2, outcome{"tm-run-a1", ex, true})

	// A contended policy cursor: lock_contention, nothing changed.
	holder, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := holder.Exec(ctx, `select 1 from docket_claim_policy where id = 1 for update`); err != nil {
		t.Fatalf("lock policy row: %v", err)
	}
	_, err = e.client.ClaimDue(ctx, docket.ClaimRequest{Now: base.Add(4 * time.Hour), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 1000})
	var unavailable *docket.ClaimPolicyUnavailableError
	if !errors.As(err, &unavailable) || unavailable.Reason != policy.ReasonLockContention {
		t.Fatalf("contended claim: want lock_contention, got %v", err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}

	// Claims 5-7: a3, then a3 again, then a2 are promoted and abandoned:
	// backoff, explicit retry time, abandon limit (poison); then a stale
	// abandon.
	a3 := e.claim(base.Add(5*time.Hour), 1, docket.PreferNone, 1000, outcome{"tm-run-a3", qr, false})["tm-run-a3"]
	e.abandon(docket.AbandonRequest{Holder: a3.Holder(), ExpectedSeq: a3.CheckpointSeq}, docket.AbandonRescheduled)
	a3 = e.claim(base.Add(6*time.Hour), 1, docket.PreferNone, 1000, outcome{"tm-run-a3", qr, false})["tm-run-a3"]
	e.abandon(docket.AbandonRequest{Holder: a3.Holder(), ExpectedSeq: a3.CheckpointSeq, RetryAt: base.Add(10 * time.Hour)}, docket.AbandonRescheduled)
	a2 = e.claim(base.Add(7*time.Hour), 1, docket.PreferNone, 1000, outcome{"tm-run-a2", qr, false})["tm-run-a2"]
	e.abandon(docket.AbandonRequest{Holder: a2.Holder(), ExpectedSeq: a2.CheckpointSeq, MaxAbandons: 1}, docket.AbandonPoisoned)
	e.abandon(docket.AbandonRequest{Holder: a2.Holder(), ExpectedSeq: a2.CheckpointSeq, MaxAbandons: 1}, docket.AbandonStale)

	// Claim 8: a3 is promoted, released (marker kept) and cancelled (a
	// signal that clears the marker); cancelling waiting b1 clears none.
	a3 = e.claim(base.Add(11*time.Hour), 1, docket.PreferNone, 1000, outcome{"tm-run-a3", qr, false})["tm-run-a3"]
	if released, err := e.client.ReleaseClaim(ctx, a3.Holder()); err != nil || !released {
		t.Fatalf("release: released %t, error %v", released, err)
	}
	for _, c := range []struct {
		scope docket.Scope
		runID string
	}{{a, "tm-run-a3"}, {b, "tm-run-b1"}} {
		if res, err := e.client.Cancel(ctx, c.scope, c.runID); err != nil || !res.Changed {
			t.Fatalf("cancel %s: changed %t, error %v", c.runID, res.Changed, err)
		}
	}
	_, err = e.client.MutateRun(ctx, b, "tm-run-b2", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusRunning}, nil
	})
	testkit.ExpectErrorIs(t, "mutate a finished run", err, docket.ErrInvalidTransition)
	if _, err := e.client.RetryPoisonedRun(ctx, a, "tm-run-a1"); err != nil {
		t.Fatalf("retry poisoned: %v", err)
	}

	// Reads and policy administration.
	if _, err := e.client.FetchRun(ctx, a, "tm-run-a1"); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	_, err = e.client.FetchRun(ctx, a, missing)
	testkit.ExpectErrorIs(t, "fetch missing", err, docket.ErrNotFound)
	if _, err := e.client.ListRuns(ctx, docket.ListRunsRequest{Scope: a}); err != nil {
		t.Fatalf("list: %v", err)
	}
	if _, err := e.client.InspectRun(ctx, b, "tm-run-b1"); err != nil {
		t.Fatalf("inspect run: %v", err)
	}
	if _, err := e.client.InspectClaimPolicy(ctx, a); err != nil {
		t.Fatalf("inspect policy: %v", err)
	}
	if _, err := e.client.PutClaimPolicyOverride(ctx, b, 3, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("put override: %v", err)
	}
	_, err = e.client.PutClaimPolicyOverride(ctx, b, 0, docket.ClaimPolicyWriteOptions{})
	testkit.ExpectErrorIs(t, "override cap 0", err, docket.ErrInvalidCap)
	stale := int64(99)
	_, err = e.client.ResetClaimPolicyOverride(ctx, b, docket.ClaimPolicyWriteOptions{ExpectedVersion: &stale})
	testkit.ExpectErrorIs(t, "stale reset", err, docket.ErrStale)
	if _, err := e.client.FetchClaimPolicyDefault(ctx); err != nil {
		t.Fatalf("fetch default: %v", err)
	}

	got := testkit.TelemetryCollect(t, ctx, e.reader)
	expectScenario(t, got)
	expectNoIdentity(t, got, append([]string{
		tenantA, tenantB, graph, hash, missing, "tm-run-x",
		"tm-run-a1", "tm-run-a2", "tm-run-a3", "tm-run-b1", "tm-run-b2",
	}, e.tokens...))
}

// expectScenario checks every instrument of the scripted scenario.
func expectScenario(t *testing.T, got testkit.TelemetryCollected) {
	t.Helper()
	wantShape := map[string]string{
		"docket.claim.duration":          "histogram s",
		"docket.claim.calls":             "counter {call}",
		"docket.claim.demand":            "histogram {outcome}",
		"docket.claim.outcomes":          "counter {outcome}",
		"docket.claim.steals":            "counter {lease}",
		"docket.claim.reacquisitions":    "counter {lease}",
		"docket.claim.promotions":        "counter {lease}",
		"docket.claim.attempts":          "counter {attempt}",
		"docket.admission.duration":      "histogram s",
		"docket.admission.contentions":   "counter {call}",
		"docket.admission.releases":      "counter {release}",
		"docket.poison":                  "counter {run}",
		"docket.store.duration":          "histogram s",
		"docket.queue.runs":              "gauge {run}",
		"docket.queue.oldest_queued_age": "gauge s",
		"docket.queue.oldest_ready_age":  "gauge s",
	}
	if !maps.Equal(got.Shape, wantShape) {
		t.Errorf("instruments:\n got  %v\n want %v", got.Shape, wantShape)
	}
	tf := func(kv ...string) string {
		return testkit.TelemetryAttrs(append([]string{"policy", "tenant_fair"}, kv...)...)
	}
	call := func(result, reason, pref, fallback string) string {
		return tf("result", result, "reason", reason, "preference", pref, "fallback", fallback)
	}
	got.ExpectPoints(t, "docket.claim.calls", testkit.TelemetryPoints{
		call("claimed", "none", "none", "false"):                6,
		call("claimed", "none", "expired", "true"):              1,
		call("claimed", "none", "expired", "false"):             1,
		call("unavailable", "lock_contention", "none", "false"): 1,
	})
	dur := func(result, pref, fallback string) string {
		return tf("result", result, "preference", pref, "fallback", fallback)
	}
	got.ExpectPoints(t, "docket.claim.duration", testkit.TelemetryPoints{
		dur("claimed", "none", "false"):     6,
		dur("claimed", "expired", "true"):   1,
		dur("claimed", "expired", "false"):  1,
		dur("unavailable", "none", "false"): 1,
	})
	got.ExpectPoints(t, "docket.claim.demand", testkit.TelemetryPoints{tf(): 9})
	if sum := got.Sums["docket.claim.demand"][tf()]; sum != 18 {
		t.Errorf("docket.claim.demand sum = %d, want 18", sum)
	}
	got.ExpectPoints(t, "docket.claim.outcomes", testkit.TelemetryPoints{
		tf("class", "queued_ready", "kind", "lease"):   8,
		tf("class", "admitted_ready", "kind", "lease"): 1,
		tf("class", "expired", "kind", "lease"):        1,
		tf("class", "expired", "kind", "poison"):       1,
	})
	got.ExpectPoints(t, "docket.claim.steals", testkit.TelemetryPoints{tf(): 1})
	got.ExpectPoints(t, "docket.claim.reacquisitions", testkit.TelemetryPoints{tf(): 1})
	got.ExpectPoints(t, "docket.claim.promotions", testkit.TelemetryPoints{tf(): 8})
	got.ExpectPoints(t, "docket.claim.attempts", testkit.TelemetryPoints{
		tf("kind", "acquired"):   8,
		tf("kind", "reacquired"): 2,
	})
	got.ExpectPoints(t, "docket.admission.duration", testkit.TelemetryPoints{
		tf("contention_phase", "none"):          8,
		tf("contention_phase", "policy_cursor"): 1,
	})
	got.ExpectPoints(t, "docket.admission.contentions", testkit.TelemetryPoints{tf("contention_phase", "policy_cursor"): 1})
	reason := func(r string) string { return testkit.TelemetryAttrs("reason", r) }
	got.ExpectPoints(t, "docket.admission.releases", testkit.TelemetryPoints{
		reason("future"):            1,
		reason("external"):          1,
		reason("terminal"):          1,
		reason("poison"):            2,
		reason("abandon_backoff"):   1,
		reason("host_incompatible"): 1,
		reason("signal"):            1,
	})
	got.ExpectPoints(t, "docket.poison", testkit.TelemetryPoints{
		reason("max_claim_attempts_exceeded"): 1,
		reason("max_claim_abandons_exceeded"): 1,
	})
	op := func(operation, result string) string {
		return testkit.TelemetryAttrs("operation", operation, "result", result)
	}
	got.ExpectPoints(t, "docket.store.duration", testkit.TelemetryPoints{
		op("insert_run", "ok"):                     5,
		op("insert_run", "invalid"):                1,
		op("commit", "ok"):                         5,
		op("commit", "stale"):                      1,
		op("refresh_claim", "ok"):                  1,
		op("refresh_claim", "stale"):               1,
		op("release_claim", "stale"):               1,
		op("release_claim", "ok"):                  1,
		op("abandon_claim", "ok"):                  3,
		op("abandon_claim", "stale"):               1,
		op("cancel", "ok"):                         2,
		op("mutate_run", "invalid"):                1,
		op("retry_poisoned_run", "ok"):             1,
		op("fetch_run", "ok"):                      1,
		op("fetch_run", "not_found"):               1,
		op("list_runs", "ok"):                      1,
		op("inspect_run", "ok"):                    1,
		op("inspect_claim_policy", "ok"):           1,
		op("put_claim_policy_override", "ok"):      1,
		op("put_claim_policy_override", "invalid"): 1,
		op("reset_claim_policy_override", "stale"): 1,
		op("fetch_claim_policy_default", "ok"):     1,
	})
}

// expectNoIdentity fails if any attribute value equals an identity of the
// scenario, or any attribute key is outside the bounded set.
func expectNoIdentity(t *testing.T, got testkit.TelemetryCollected, identities []string) {
	t.Helper()
	if len(got.Values) == 0 {
		t.Fatal("no attribute values collected")
	}
	for _, v := range got.Values {
		if slices.Contains(identities, v) {
			t.Errorf("attribute value %q is an identity of the scenario", v)
		}
	}
	allowed := []string{"policy", "result", "reason", "preference", "fallback", "class", "kind", "operation", "contention_phase", "domain", "phase"}
	for k := range got.Keys {
		if !slices.Contains(allowed, k) {
			t.Errorf("attribute key %q is outside the bounded set", k)
		}
	}
}

// TestTelemetryLegacyClaims checks the Legacy engine's claim metrics: plain
// leases are acquired attempts and never promotions, a steal is a
// reacquired attempt, an unmarked poison clears no marker, and an empty
// call is counted as such.
func TestTelemetryLegacyClaims(t *testing.T) {
	pool := testkit.NewPool(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.LegacyConfig()
	cfg.MeterProvider = provider
	e := &metricsEnv{t: t, ctx: testkit.Context(t), pool: pool, client: testkit.OpenClient(t, pool, cfg), reader: reader}
	for i, runID := range []string{"tm-legacy-1", "tm-legacy-2"} {
		if _, err := e.client.InsertRun(e.ctx, docket.NewRun{
			RunID: runID, GraphID: graph, GraphHash: hash, State: json.RawMessage(`{}`),
			WakeAt: base.Add(time.Duration(i-2) * time.Minute),
		}); err != nil {
			t.Fatalf("insert %s: %v", runID, err)
		}
	}
	qr, ex := docket.ClassQueuedReady, docket.ClassExpired
	e.claim(base, 2, docket.PreferNone, 1000, outcome{"tm-legacy-1", qr, false}, outcome{"tm-legacy-2", qr, false})
	e.claim(base.Add(2*time.Hour), 1, docket.PreferReady, 1000, outcome{"tm-legacy-1", ex, false})
	e.claim(base.Add(2*time.Hour+time.Second), 1, docket.PreferNone, 1, outcome{"tm-legacy-2", ex, true})
	e.claim(base.Add(2*time.Hour+2*time.Second), 3, docket.PreferNone, 1000)

	got := testkit.TelemetryCollect(t, e.ctx, reader)
	lg := func(kv ...string) string {
		return testkit.TelemetryAttrs(append([]string{"policy", "legacy"}, kv...)...)
	}
	call := func(result, pref, fallback string) string {
		return lg("result", result, "reason", "none", "preference", pref, "fallback", fallback)
	}
	got.ExpectPoints(t, "docket.claim.calls", testkit.TelemetryPoints{
		call("claimed", "none", "false"): 2,
		call("claimed", "ready", "true"): 1,
		call("empty", "none", "false"):   1,
	})
	got.ExpectPoints(t, "docket.claim.demand", testkit.TelemetryPoints{lg(): 4})
	if sum := got.Sums["docket.claim.demand"][lg()]; sum != 7 {
		t.Errorf("docket.claim.demand sum = %d, want 7", sum)
	}
	got.ExpectPoints(t, "docket.claim.outcomes", testkit.TelemetryPoints{
		lg("class", "queued_ready", "kind", "lease"): 2,
		lg("class", "expired", "kind", "lease"):      1,
		lg("class", "expired", "kind", "poison"):     1,
	})
	got.ExpectPoints(t, "docket.claim.steals", testkit.TelemetryPoints{lg(): 1})
	got.ExpectPoints(t, "docket.claim.reacquisitions", nil)
	got.ExpectPoints(t, "docket.claim.promotions", nil)
	got.ExpectPoints(t, "docket.claim.attempts", testkit.TelemetryPoints{lg("kind", "acquired"): 2, lg("kind", "reacquired"): 1})
	got.ExpectPoints(t, "docket.admission.duration", testkit.TelemetryPoints{lg("contention_phase", "none"): 4})
	got.ExpectPoints(t, "docket.admission.contentions", nil)
	got.ExpectPoints(t, "docket.admission.releases", nil)
	got.ExpectPoints(t, "docket.poison", testkit.TelemetryPoints{testkit.TelemetryAttrs("reason", "max_claim_attempts_exceeded"): 1})
	got.ExpectPoints(t, "docket.store.duration", testkit.TelemetryPoints{testkit.TelemetryAttrs("operation", "insert_run", "result", "ok"): 2})
	expectNoIdentity(t, got, append([]string{graph, hash, "tm-legacy-1", "tm-legacy-2"}, e.tokens...))
}

// TestTelemetryAdmin checks that NewAdmin records its calls on its own
// MeterProvider and nothing else.
func TestTelemetryAdmin(t *testing.T) {
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired, MeterProvider: provider})
	if err != nil {
		t.Fatalf("new admin: %v", err)
	}
	tenant := docket.Tenant(tenantA)
	if _, err := admin.FetchClaimPolicyDefault(ctx); err != nil {
		t.Fatalf("fetch default: %v", err)
	}
	_, err = admin.PutClaimPolicyDefault(ctx, 3, docket.ClaimPolicyWriteOptions{})
	testkit.ExpectErrorIs(t, "default before initialization", err, docket.ErrNotInitialized)
	if _, err := admin.PutClaimPolicyOverride(ctx, tenant, 5, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("put override: %v", err)
	}
	if _, err := admin.InspectClaimPolicy(ctx, tenant); err != nil {
		t.Fatalf("inspect: %v", err)
	}
	_, err = admin.InspectClaimPolicy(ctx, docket.Tenantless)
	testkit.ExpectErrorIs(t, "tenantless inspect", err, docket.ErrTenantRequired)

	got := testkit.TelemetryCollect(t, ctx, reader)
	if want := map[string]string{"docket.store.duration": "histogram s"}; !maps.Equal(got.Shape, want) {
		t.Errorf("instruments: got %v, want %v", got.Shape, want)
	}
	op := func(operation, result string) string {
		return testkit.TelemetryAttrs("operation", operation, "result", result)
	}
	got.ExpectPoints(t, "docket.store.duration", testkit.TelemetryPoints{
		op("fetch_claim_policy_default", "ok"):    1,
		op("put_claim_policy_default", "invalid"): 1,
		op("put_claim_policy_override", "ok"):     1,
		op("inspect_claim_policy", "ok"):          1,
		op("inspect_claim_policy", "invalid"):     1,
	})
	expectNoIdentity(t, got, []string{tenantA})
}

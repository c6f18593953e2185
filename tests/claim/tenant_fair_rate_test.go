package claim

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// fiveEverySecond is 5 promotions per second with a burst of 4: a step of
// 200 ms, and 5 tokens in a rested partition.
var fiveEverySecond = docket.RateLimit{Limit: 5, Period: time.Second, Burst: 4}

// scopeDispositions lists the dispositions of tenant's visits in tr.
func scopeDispositions(tr docket.ClaimTrace, tenant string) []policy.Disposition {
	var out []policy.Disposition
	for _, in := range tr.Inspections {
		if in.ScopeKey == tenant {
			out = append(out, in.Disposition)
		}
	}
	return out
}

// promotionTimes appends a time for each queued promotion of tenant in tr,
// a call made at now.
func promotionTimes(times []time.Time, tr docket.ClaimTrace, tenant string, now time.Time) []time.Time {
	for _, o := range tr.Outcomes {
		if o.Disposition == string(policy.OutcomeQueuedPromotion) && o.Scope == docket.Tenant(tenant) && !o.Poisoned {
			times = append(times, now)
		}
	}
	return times
}

// rateTime reads tenant's stored rate time.
func rateTime(t *testing.T, e *testkit.ClaimEnv, tenant string) time.Time {
	t.Helper()
	var tat time.Time
	if err := e.Pool.QueryRow(testkit.Context(t), `select rate_tat from docket_claim_partitions where scope_key = $1`, tenant).Scan(&tat); err != nil {
		t.Fatalf("rate time of %s: %v", tenant, err)
	}
	return tat
}

// TestTenantFairRateAtTheEdge walks a rate of 5 per second with burst 4 at
// the database's injected clock: a rested tenant gets exactly 5 promotions
// (the fifth allowed, the sixth refused) while another tenant is served in
// the same call; 1 µs before its next token every visit of it is
// rate_limited; at the token exactly one more; after a quiet spell the
// bucket is full again. The inspection shows the rate, its source, the
// tokens left and the next admission, and the committed promotion times meet
// the stated guarantee (oracle.CheckRate).
func TestTenantFairRateAtTheEdge(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	ctx := testkit.Context(t)
	early := testkit.ClaimBase.Add(-time.Hour)
	a := e.DueMany("a", "a", 10, early)
	b := e.DueMany("b", "b", 3, early)

	zero := int64(0)
	written, err := e.Client.PutTenantRate(ctx, docket.Tenant("a"), fiveEverySecond, docket.ClaimPolicyWriteOptions{ExpectedVersion: &zero})
	if err != nil || written.Rate != fiveEverySecond || written.Exempt || written.Version != 1 {
		t.Fatalf("PutTenantRate(a) = %+v, %v; want the rate at version 1", written, err)
	}

	t0 := testkit.ClaimBase
	first := e.Trace(testkit.ClaimReq(t0, 20, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "rested call", testkit.ClaimOutcomeIDs(first), append(slices.Clone(a[:5]), b...))
	if got := scopeDispositions(first, "a"); got[0] != policy.DispositionGrant || slices.ContainsFunc(got[1:], func(d policy.Disposition) bool {
		return d != policy.DispositionRateLimited
	}) {
		t.Fatalf("visits of a in the rested call = %v, want one grant then rate_limited", got)
	}

	insp, err := e.Client.InspectClaimPolicy(ctx, docket.Tenant("a"))
	next := t0.Add(200 * time.Millisecond)
	if err != nil || insp.Rate != fiveEverySecond || insp.RateSource != docket.RateFromOverride || insp.RateTokens != 0 ||
		insp.NextAdmissionAt == nil || !insp.NextAdmissionAt.Equal(next) {
		t.Fatalf("InspectClaimPolicy(a) = rate %v source %q tokens %d next %v, %v; want %v override 0 %v",
			insp.Rate, insp.RateSource, insp.RateTokens, insp.NextAdmissionAt, err, fiveEverySecond, next)
	}

	before := e.Trace(testkit.ClaimReq(next.Add(-time.Microsecond), 20, docket.PreferNone))
	if got := testkit.ClaimOutcomeIDs(before); len(got) != 0 {
		t.Fatalf("1 µs before the token: outcomes %v, want none", got)
	}
	if got := scopeDispositions(before, "a"); len(got) == 0 || slices.ContainsFunc(got, func(d policy.Disposition) bool {
		return d != policy.DispositionRateLimited
	}) {
		t.Fatalf("visits of a 1 µs before the token = %v, want all rate_limited", got)
	}
	at := e.Trace(testkit.ClaimReq(next, 20, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "at the token", testkit.ClaimOutcomeIDs(at), a[5:6])

	// The rate time is now t0 + 1.2 s; at t0 + 1.4 s the bucket is full: 5
	// tokens, of which the 4 queued runs left take 4.
	rested := t0.Add(1400 * time.Millisecond)
	last := e.Trace(testkit.ClaimReq(rested, 20, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "rested again", testkit.ClaimOutcomeIDs(last), a[6:])

	times := promotionTimes(nil, first, "a", t0)
	times = promotionTimes(times, at, "a", next)
	times = promotionTimes(times, last, "a", rested)
	if len(times) != 10 {
		t.Fatalf("promotions of a = %d, want 10", len(times))
	}
	if err := oracle.CheckRate(times, oracle.Rate{Limit: 5, Period: time.Second, Burst: 4}); err != nil {
		t.Fatalf("promotion times break the rate: %v", err)
	}
	if stored, want := rateTime(t, e, "a"), rested.Add(4*200*time.Millisecond); !stored.Equal(want) {
		t.Fatalf("rate time of a = %v, want %v", stored, want)
	}
}

// TestTenantFairRateComposesWithCapAndPause: the cap and the rate both
// gate a promotion (the cap first names the visit), admitted work of a
// rate-limited tenant is still reacquired, a paused tenant is paused
// whatever its rate, and a queued poison needs a token but takes none.
func TestTenantFairRateComposesWithCapAndPause(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	ctx := testkit.Context(t)
	early := testkit.ClaimBase.Add(-time.Hour)
	a := e.DueMany("a", "a", 4, early)
	one := docket.RateLimit{Limit: 1, Period: time.Minute}
	if _, err := e.Client.PutTenantRate(ctx, docket.Tenant("a"), one, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutTenantRate: %v", err)
	}
	t0 := testkit.ClaimBase
	first := e.Trace(testkit.ClaimReq(t0, 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(first), a[:1])

	// a-1 yields: admitted-ready work is reacquired without a token.
	e.Release(a[0], early)
	e.MarkAdmitted(a[0])
	again := e.Trace(testkit.ClaimReq(t0.Add(time.Second), 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "reacquisition", testkit.ClaimOutcomeIDs(again), a[:1])
	if got := scopeDispositions(again, "a"); got[0] != policy.DispositionGrant || got[1] != policy.DispositionRateLimited {
		t.Fatalf("visits of a = %v, want grant then rate_limited", got)
	}

	// A minute on a-2 is promoted (one token), filling the cap of 2; then
	// the cap names the visit before the rate does.
	later := t0.Add(time.Minute)
	third := e.Trace(testkit.ClaimReq(later, 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "at the next token", testkit.ClaimOutcomeIDs(third), a[1:2])
	if got := scopeDispositions(third, "a"); got[1] != policy.DispositionCapDebtDenial {
		t.Fatalf("visits of a after the cap filled = %v, want cap_debt_denial second", got)
	}

	// Paused wins over the rate.
	if _, err := e.Client.PauseTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PauseTenant: %v", err)
	}
	paused := e.Trace(testkit.ClaimReq(later.Add(time.Hour), 4, docket.PreferNone))
	if got := scopeDispositions(paused, "a"); got[0] != policy.DispositionPaused {
		t.Fatalf("visits of a while paused = %v, want paused", got)
	}
	if _, err := e.Client.ResumeTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("ResumeTenant: %v", err)
	}

	// A queued poison at the head needs a token but takes none: with the
	// cap freed and the token spent, the poison waits; at the next token
	// it is poisoned and a-4 is promoted with that same token.
	e.Finish(a[0], a[1])
	e.SetAttempts(a[2], 5)
	stored := rateTime(t, e, "a")
	noToken := e.Trace(docket.ClaimRequest{Now: stored.Add(-time.Microsecond), ClaimTTL: testkit.ClaimTTL, Limit: 4, MaxClaimAttempts: 5})
	if got := testkit.ClaimOutcomeIDs(noToken); len(got) != 0 {
		t.Fatalf("before the token: outcomes %v, want none", got)
	}
	withToken := e.Trace(docket.ClaimRequest{Now: stored, ClaimTTL: testkit.ClaimTTL, Limit: 4, MaxClaimAttempts: 5})
	testkit.ClaimExpectIDs(t, "at the token", testkit.ClaimOutcomeIDs(withToken), a[2:])
	if !withToken.Outcomes[0].Poisoned || withToken.Outcomes[1].Poisoned {
		t.Fatalf("outcomes at the token = %+v, want a-3 poisoned and a-4 promoted", withToken.Outcomes)
	}
	if got, want := rateTime(t, e, "a"), stored.Add(time.Minute); !got.Equal(want) {
		t.Fatalf("rate time after one promotion = %v, want %v (the poison took no token)", got, want)
	}
}

// TestTenantFairRateWrites: the default rate, a tenant's own rate, its
// exemption and its reset, each a compare-and-set; the effective rate and
// its source follow; invalid rates are ErrInvalidRate with nothing written,
// and a direct write the facade would refuse meets the named checks.
func TestTenantFairRateWrites(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 3)
	ctx := testkit.Context(t)
	def := docket.RateLimit{Limit: 100, Period: time.Minute, Burst: 10}
	policyRow, err := e.Client.FetchClaimPolicyDefault(ctx)
	if err != nil {
		t.Fatalf("FetchClaimPolicyDefault: %v", err)
	}
	version := policyRow.Version
	written, err := e.Client.PutClaimPolicyRate(ctx, def, docket.ClaimPolicyWriteOptions{ExpectedVersion: &version})
	if err != nil || written.Rate != def || written.Version != version+1 {
		t.Fatalf("PutClaimPolicyRate = %+v, %v; want %v at version %d", written, err, def, version+1)
	}
	if _, err := e.Client.PutClaimPolicyRate(ctx, docket.RateLimit{}, docket.ClaimPolicyWriteOptions{ExpectedVersion: &version}); !errors.Is(err, docket.ErrStale) {
		t.Fatalf("stale PutClaimPolicyRate = %v, want ErrStale", err)
	}
	expectRate := func(tenant string, rate docket.RateLimit, source docket.RateSource) {
		t.Helper()
		insp, err := e.Client.InspectClaimPolicy(ctx, docket.Tenant(tenant))
		if err != nil || insp.Rate != rate || insp.RateSource != source {
			t.Fatalf("InspectClaimPolicy(%s) = rate %v source %q, %v; want %v %q", tenant, insp.Rate, insp.RateSource, err, rate, source)
		}
		wantTokens := 0
		if !rate.IsZero() {
			wantTokens = rate.Burst + 1
		}
		if insp.RateTokens != wantTokens || insp.NextAdmissionAt != nil {
			t.Fatalf("InspectClaimPolicy(%s) tokens %d next %v, want %d and none", tenant, insp.RateTokens, insp.NextAdmissionAt, wantTokens)
		}
	}
	expectRate("t", def, docket.RateFromDefault)

	own := docket.RateLimit{Limit: 10, Period: time.Second}
	if got, err := e.Client.PutTenantRate(ctx, docket.Tenant("t"), own, docket.ClaimPolicyWriteOptions{}); err != nil || got.Rate != own || got.Version != 1 {
		t.Fatalf("PutTenantRate = %+v, %v", got, err)
	}
	expectRate("t", own, docket.RateFromOverride)
	if got, err := e.Client.PutTenantRate(ctx, docket.Tenant("t"), docket.RateLimit{}, docket.ClaimPolicyWriteOptions{}); err != nil || !got.Exempt || got.Version != 2 {
		t.Fatalf("PutTenantRate(exempt) = %+v, %v", got, err)
	}
	expectRate("t", docket.RateLimit{}, docket.RateExempt)
	one := int64(1)
	if _, err := e.Client.ResetTenantRate(ctx, docket.Tenant("t"), docket.ClaimPolicyWriteOptions{ExpectedVersion: &one}); !errors.Is(err, docket.ErrStale) {
		t.Fatalf("stale ResetTenantRate = %v, want ErrStale", err)
	}
	if got, err := e.Client.ResetTenantRate(ctx, docket.Tenant("t"), docket.ClaimPolicyWriteOptions{}); err != nil || got.Exempt || !got.Rate.IsZero() || got.Version != 3 {
		t.Fatalf("ResetTenantRate = %+v, %v", got, err)
	}
	expectRate("t", def, docket.RateFromDefault)

	before := e.Snapshot()
	for _, bad := range []docket.RateLimit{
		{Limit: 0, Period: time.Second}, {Limit: docket.MaxRateLimit + 1, Period: time.Second},
		{Limit: 1, Period: time.Microsecond}, {Limit: 1, Period: docket.MaxRatePeriod + time.Second},
		{Limit: 1, Period: time.Second + time.Nanosecond}, {Limit: 1, Period: time.Second, Burst: -1},
	} {
		if _, err := e.Client.PutTenantRate(ctx, docket.Tenant("t"), bad, docket.ClaimPolicyWriteOptions{}); !errors.Is(err, docket.ErrInvalidRate) {
			t.Fatalf("PutTenantRate(%+v) = %v, want ErrInvalidRate", bad, err)
		}
		if _, err := e.Client.PutClaimPolicyRate(ctx, bad, docket.ClaimPolicyWriteOptions{}); !errors.Is(err, docket.ErrInvalidRate) {
			t.Fatalf("PutClaimPolicyRate(%+v) = %v, want ErrInvalidRate", bad, err)
		}
	}
	if after := e.Snapshot(); after != before {
		t.Fatalf("refused rate writes changed the domain:\n%s\nwant\n%s", after, before)
	}
	for sql, constraint := range map[string]string{
		`update docket_claim_partitions set rate_limit = 0, rate_period = '1 second', rate_burst = 0 where scope_key = 't'`:                        "docket_claim_partitions_rate_check",
		`update docket_claim_partitions set rate_limit = 5 where scope_key = 't'`:                                                                  "docket_claim_partitions_rate_check",
		`update docket_claim_partitions set rate_limit = 5, rate_period = '1 second', rate_burst = 0, rate_unlimited = true where scope_key = 't'`: "docket_claim_partitions_rate_check",
		`update docket_claim_policy set rate_limit = 1, rate_period = '8 days', rate_burst = 0`:                                                    "docket_claim_policy_rate_check",
	} {
		_, err := e.Pool.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "23514" || pgErr.ConstraintName != constraint {
			t.Fatalf("%s: %v, want check_violation of %s", sql, err, constraint)
		}
	}

	// docket_rate_step in the database and RateLimit.Step agree.
	for _, r := range []docket.RateLimit{{Limit: 3, Period: time.Second}, {Limit: 7, Period: 100 * time.Millisecond},
		{Limit: 1_000_000, Period: time.Millisecond}, {Limit: 50, Period: time.Second}, {Limit: 9, Period: 7 * 24 * time.Hour}} {
		var step time.Duration
		if err := e.Pool.QueryRow(ctx, `select docket_rate_step($1, $2)`, r.Limit, r.Period).Scan(&step); err != nil {
			t.Fatalf("docket_rate_step: %v", err)
		}
		if step != r.Step() {
			t.Fatalf("docket_rate_step(%d, %s) = %s, RateLimit.Step = %s", r.Limit, r.Period, step, r.Step())
		}
	}
}

// TestTenantFairRateParks: in parked mode a rate_limited visit of an
// otherwise dormant partition parks it until its next token, so later calls
// do not visit it; the wake sweep brings it back at that token, and a
// looser rate written meanwhile wakes it at once.
func TestTenantFairRateParks(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	ctx := testkit.Context(t)
	if _, err := e.Client.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutClaimPolicyParking: %v", err)
	}
	early := testkit.ClaimBase.Add(-time.Hour)
	a := e.DueMany("a", "a", 3, early)
	e.DueMany("b", "b", 1, early)
	rate := docket.RateLimit{Limit: 1, Period: time.Minute}
	if _, err := e.Client.PutTenantRate(ctx, docket.Tenant("a"), rate, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutTenantRate: %v", err)
	}
	t0 := testkit.ClaimBase
	first := e.Trace(testkit.ClaimReq(t0, 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(first), []string{"a-1", "b-1"})
	// a-1 finishes, so nothing of a is claimed: its next visit parks it.
	e.Finish(a[0])
	second := e.Trace(testkit.ClaimReq(t0.Add(time.Second), 4, docket.PreferNone))
	if got := scopeDispositions(second, "a"); !slices.Equal(got, []policy.Disposition{policy.DispositionRateLimited}) {
		t.Fatalf("visits of a = %v, want one rate_limited (then parked)", got)
	}
	if in := second.Inspections[0]; in.ScopeKey != "a" || !in.Parked || in.ParkedUntil == nil || !in.ParkedUntil.Equal(t0.Add(time.Minute)) {
		t.Fatalf("inspection of the park = %+v, want a parked until %v", in, t0.Add(time.Minute))
	}
	e.ExpectPark("a", testkit.ParkedUntil(t0.Add(time.Minute)))
	quiet := e.Trace(testkit.ClaimReq(t0.Add(30*time.Second), 4, docket.PreferNone))
	if got := scopeDispositions(quiet, "a"); len(got) != 0 {
		t.Fatalf("visits of the parked a = %v, want none", got)
	}
	woken := e.Trace(testkit.ClaimReq(t0.Add(time.Minute), 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "at the token", testkit.ClaimOutcomeIDs(woken), a[1:2])

	// Parked again until t0 + 2 min; a looser rate wakes it at once.
	e.Finish(a[1])
	e.Trace(testkit.ClaimReq(t0.Add(61*time.Second), 4, docket.PreferNone))
	e.ExpectPark("a", testkit.ParkedUntil(t0.Add(2*time.Minute)))
	if _, err := e.Client.PutTenantRate(ctx, docket.Tenant("a"), docket.RateLimit{Limit: 60, Period: time.Minute}, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutTenantRate: %v", err)
	}
	e.ExpectPark("a", testkit.Awake)
	// The stored rate time, t0 + 2 min, still spaces the next promotion:
	// the new rate (step 1 s, no burst) allows it from then on.
	looser := e.Trace(testkit.ClaimReq(t0.Add(2*time.Minute), 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "after the looser rate", testkit.ClaimOutcomeIDs(looser), a[2:])
}

// TestTenantFairRateUnderConcurrentClaimers: 16 claimers call at once, each
// at its own clock, until a rate-limited tenant's 30 runs are all admitted.
// From the committed admission times, no interval of one period holds more
// than limit + burst of them, the bound the partition authority and the
// fresh read of the rate time make exact.
func TestTenantFairRateUnderConcurrentClaimers(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	ctx := testkit.Context(t)
	rate := docket.RateLimit{Limit: 10, Period: 500 * time.Millisecond, Burst: 3}
	const runs = 30
	e.DueMany("a", "a", runs, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	if _, err := e.Client.PutTenantRate(ctx, docket.Tenant("a"), rate, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutTenantRate: %v", err)
	}
	admitted := func() int64 {
		return testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where tenant_admitted_at is not null`)
	}
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			for admitted() < runs {
				req := testkit.ClaimReq(time.Now(), 4, docket.PreferNone)
				// A call that waited too long for the policy row is refused
				// and changes nothing; the claimer calls again.
				var refused *docket.ClaimPolicyUnavailableError
				if _, err := e.Client.ClaimDue(ctx, req); err != nil && !(errors.As(err, &refused) && refused.Reason == policy.ReasonLockContention) {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatalf("claimer: %v", err)
		}
	}
	rows, err := e.Pool.Query(ctx, `select tenant_admitted_at from docket_runs where tenant_admitted_at is not null order by 1`)
	if err != nil {
		t.Fatalf("admission times: %v", err)
	}
	var times []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatalf("admission time: %v", err)
		}
		times = append(times, at)
	}
	if rows.Err() != nil || len(times) != runs {
		t.Fatalf("admission times: %d, %v; want %d", len(times), rows.Err(), runs)
	}
	limit := rate.Limit + rate.Burst
	for i, start := 0, 0; i < len(times); i++ {
		for !times[i].Before(times[start].Add(rate.Period)) {
			start++
		}
		if n := i - start + 1; n > limit {
			t.Fatalf("%d admissions in [%v, %v), want at most %d", n, times[start], times[start].Add(rate.Period), limit)
		}
	}
	if last := times[runs-1].Sub(times[0]); last < time.Duration(runs-rate.Burst-1)*rate.Step() {
		t.Fatalf("30 admissions within %s, want at least %s", last, time.Duration(runs-rate.Burst-1)*rate.Step())
	}
}

package claim

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// BenchmarkClaimDue reports ns/op per claim call and claims/s for both
// engines on the same backlog: demand 10 and demand 16 from one caller, and
// demand 16 from testkit.BenchClaimers concurrent callers. Compare engines only
// within one run, as ratios.
func BenchmarkClaimDue(b *testing.B) {
	for _, eng := range testkit.BenchEngines {
		b.Run(eng.Name, func(b *testing.B) {
			benchClaimDue(b, eng.Open(b, testkit.BenchCap, 4), testkit.BenchDemand)
		})
	}
	b.Run("demand16", func(b *testing.B) {
		for _, eng := range testkit.BenchEngines {
			b.Run(eng.Name, func(b *testing.B) {
				benchClaimDue(b, eng.Open(b, testkit.BenchCap, 4), testkit.BenchWideDemand)
			})
		}
	})
	b.Run(fmt.Sprintf("parallel%d_demand16", testkit.BenchClaimers), func(b *testing.B) {
		for _, eng := range testkit.BenchEngines {
			b.Run(eng.Name, func(b *testing.B) {
				benchClaimDueParallel(b, eng.Open(b, math.MaxInt32, testkit.BenchClaimers+2))
			})
		}
	})
}

// benchBacklog inserts runs due runs spread over testkit.BenchTenants, the newest
// due at testkit.ClaimBase, and vacuums and analyzes them.
func benchBacklog(b *testing.B, e *testkit.ClaimEnv, runs int) {
	testkit.ExecSQL(b, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('b-%s', g), format('t%s', lpad((g % $2::integer)::text, 3, '0')), 'g', 'h1', 'running',
		       '{}', $3::timestamptz - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, runs, testkit.BenchTenants, testkit.ClaimBase)
	testkit.ExecSQL(b, e.Pool, `vacuum analyze docket_runs`)
}

func benchClaimDue(b *testing.B, e *testkit.ClaimEnv, demand int) {
	benchBacklog(b, e, testkit.BenchRuns)
	req := docket.ClaimRequest{Now: testkit.ClaimBase, Limit: demand, ClaimTTL: testkit.ClaimTTL, MaxClaimAttempts: math.MaxInt32}
	ctx := testkit.Context(b)
	claims := 0
	b.ResetTimer()
	for range b.N {
		res, err := e.Client.ClaimDue(ctx, req)
		if err != nil {
			b.Fatalf("claim: %v", err)
		}
		if res.Outcomes() == 0 {
			b.Fatal("the backlog yielded no claim")
		}
		claims += res.Outcomes()
		b.StopTimer()
		ids := make([]string, len(res.Leases))
		for i, l := range res.Leases {
			ids[i] = l.RunID
		}
		testkit.ExecSQL(b, e.Pool, `update docket_runs
			   set claim_token = null, claimed_at = null, wake_at = $2, tenant_admitted_at = null
			 where run_id = any($1)`, ids, testkit.ClaimBase)
		b.StartTimer()
	}
	b.ReportMetric(float64(claims)/b.Elapsed().Seconds(), "claims/s")
	b.ReportMetric(float64(claims)/float64(b.N), "claims/op")
}

// benchClaimDueParallel runs b.N claim calls of demand testkit.BenchWideDemand from
// testkit.BenchClaimers concurrent loops. Claims are kept; the backlog holds a
// quarter more runs than the calls can take. A TenantFair call that waits
// for the policy cursor longer than the engine's lock wait returns
// lock_contention, a normal outcome under contention: it counts as a call
// and is reported as contended/op.
func benchClaimDueParallel(b *testing.B, e *testkit.ClaimEnv) {
	benchBacklog(b, e, max(testkit.BenchRuns, b.N*testkit.BenchWideDemand*5/4))
	req := docket.ClaimRequest{Now: testkit.ClaimBase, Limit: testkit.BenchWideDemand, ClaimTTL: testkit.ClaimTTL, MaxClaimAttempts: math.MaxInt32}
	ctx := testkit.Context(b)
	var calls, claims, empty, contended atomic.Int64
	errs := make(chan error, testkit.BenchClaimers)
	var wg sync.WaitGroup
	b.ResetTimer()
	for range testkit.BenchClaimers {
		wg.Go(func() {
			for calls.Add(1) <= int64(b.N) {
				res, err := e.Client.ClaimDue(ctx, req)
				if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok &&
					unavailable.Reason == policy.ReasonLockContention {
					contended.Add(1)
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				if res.Outcomes() == 0 {
					empty.Add(1)
				}
				claims.Add(int64(res.Outcomes()))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatalf("claim: %v", err)
	}
	if empty.Load() > 0 {
		b.Fatalf("%d claim calls found nothing in a backlog that cannot run dry", empty.Load())
	}
	b.ReportMetric(float64(claims.Load())/b.Elapsed().Seconds(), "claims/s")
	b.ReportMetric(float64(claims.Load())/float64(b.N), "claims/op")
	b.ReportMetric(float64(contended.Load())/float64(b.N), "contended/op")
}

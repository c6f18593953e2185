package tests

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Benchmark shapes. The serial shapes claim from a 20,000-run due backlog in
// 100 tenants, one ClaimDue call per iteration; outside the timer its leases
// are put back at the tail of the backlog with their admission cleared (as a
// finished run replaced by a new one would be), so the backlog and the
// admitted counts stay steady. The parallel shape keeps its claims, like a
// claim ceiling: benchClaimers loops share b.N calls on a backlog large
// enough never to run dry, with caps that never bind.
const (
	benchRuns    = 20000
	benchTenants = 100
	benchDemand  = 10
	// benchCap leaves TenantFair 1,000 admission slots over the backlog.
	benchCap = 10
	// benchWideDemand fills two TenantFair grants of Q = 8 per call.
	benchWideDemand = 16
	benchClaimers   = 8
)

// benchEngine opens a fresh database with a client of one engine.
type benchEngine struct {
	name string
	open func(b *testing.B, defaultCap int, conns int32) *clEnv
}

var benchEngines = []benchEngine{
	{"tenant_fair", func(b *testing.B, defaultCap int, conns int32) *clEnv {
		pool := clPoolWithSize(b, conns)
		return &clEnv{t: b, pool: pool, client: openClient(b, pool, tenantFairConfig(defaultCap))}
	}},
	// Parked mode with nothing dormant: what parking costs a busy domain.
	{"tenant_fair_parked", func(b *testing.B, defaultCap int, conns int32) *clEnv {
		pool := clPoolWithSize(b, conns)
		return &clEnv{t: b, pool: pool, client: openClient(b, pool, parkedConfig(defaultCap))}
	}},
	{"legacy", func(b *testing.B, _ int, conns int32) *clEnv {
		pool := clPoolWithSize(b, conns)
		return &clEnv{t: b, pool: pool, client: openClient(b, pool, legacyConfig())}
	}},
}

// BenchmarkClaimDue reports ns/op per claim call and claims/s for both
// engines on the same backlog: demand 10 and demand 16 from one caller, and
// demand 16 from benchClaimers concurrent callers. Compare engines only
// within one run, as ratios.
func BenchmarkClaimDue(b *testing.B) {
	for _, eng := range benchEngines {
		b.Run(eng.name, func(b *testing.B) {
			benchClaimDue(b, eng.open(b, benchCap, 4), benchDemand)
		})
	}
	b.Run("demand16", func(b *testing.B) {
		for _, eng := range benchEngines {
			b.Run(eng.name, func(b *testing.B) {
				benchClaimDue(b, eng.open(b, benchCap, 4), benchWideDemand)
			})
		}
	})
	b.Run(fmt.Sprintf("parallel%d_demand16", benchClaimers), func(b *testing.B) {
		for _, eng := range benchEngines {
			b.Run(eng.name, func(b *testing.B) {
				benchClaimDueParallel(b, eng.open(b, math.MaxInt32, benchClaimers+2))
			})
		}
	})
}

// benchBacklog inserts runs due runs spread over benchTenants, the newest
// due at clBase, and vacuums and analyzes them.
func benchBacklog(b *testing.B, e *clEnv, runs int) {
	execSQL(b, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('b-%s', g), format('t%s', lpad((g % $2::integer)::text, 3, '0')), 'g', 'h1', 'running',
		       '{}', $3::timestamptz - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, runs, benchTenants, clBase)
	execSQL(b, e.pool, `vacuum analyze docket_runs`)
}

func benchClaimDue(b *testing.B, e *clEnv, demand int) {
	benchBacklog(b, e, benchRuns)
	req := docket.ClaimRequest{Now: clBase, Limit: demand, OrphanTTL: clTTL, MaxClaimAttempts: math.MaxInt32}
	ctx := testContext(b)
	claims := 0
	b.ResetTimer()
	for range b.N {
		res, err := e.client.ClaimDue(ctx, req)
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
		execSQL(b, e.pool, `update docket_runs
			   set claim_token = null, claimed_at = null, wake_at = $2, tenant_admitted_at = null
			 where run_id = any($1)`, ids, clBase)
		b.StartTimer()
	}
	b.ReportMetric(float64(claims)/b.Elapsed().Seconds(), "claims/s")
	b.ReportMetric(float64(claims)/float64(b.N), "claims/op")
}

// benchClaimDueParallel runs b.N claim calls of demand benchWideDemand from
// benchClaimers concurrent loops. Claims are kept; the backlog holds a
// quarter more runs than the calls can take. A TenantFair call that waits
// for the policy cursor longer than the engine's lock wait returns
// lock_contention, a normal outcome under contention: it counts as a call
// and is reported as contended/op.
func benchClaimDueParallel(b *testing.B, e *clEnv) {
	benchBacklog(b, e, max(benchRuns, b.N*benchWideDemand*5/4))
	req := docket.ClaimRequest{Now: clBase, Limit: benchWideDemand, OrphanTTL: clTTL, MaxClaimAttempts: math.MaxInt32}
	ctx := testContext(b)
	var calls, claims, empty, contended atomic.Int64
	errs := make(chan error, benchClaimers)
	var wg sync.WaitGroup
	b.ResetTimer()
	for range benchClaimers {
		wg.Go(func() {
			for calls.Add(1) <= int64(b.N) {
				res, err := e.client.ClaimDue(ctx, req)
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

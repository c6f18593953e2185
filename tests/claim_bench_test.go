package tests

import (
	"math"
	"testing"

	"github.com/docketrun/docket-go/docket"
)

// Benchmark shape: a 20,000-run due backlog in 100 tenants. Every iteration is
// one ClaimDue call of demand 10; outside the timer its leases are put back
// at the tail of the backlog with their admission cleared (as a finished run
// replaced by a new one would be), so the backlog and the admitted counts
// stay steady.
const (
	benchRuns    = 20000
	benchTenants = 100
	benchDemand  = 10
	// benchCap leaves TenantFair 1,000 admission slots over the backlog.
	benchCap = 10
)

// BenchmarkClaimDue reports ns/op per claim call and claims/s for both
// engines on the same backlog.
func BenchmarkClaimDue(b *testing.B) {
	b.Run("tenant_fair", func(b *testing.B) {
		benchClaimDue(b, newClTenantFair(b, benchCap))
	})
	b.Run("legacy", func(b *testing.B) {
		benchClaimDue(b, newClLegacy(b))
	})
}

func benchClaimDue(b *testing.B, e *clEnv) {
	execSQL(b, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('b-%s', g), format('t%s', lpad((g % $2::integer)::text, 3, '0')), 'g', 'h1', 'running',
		       '{}', $3::timestamptz - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, benchRuns, benchTenants, clBase)
	execSQL(b, e.pool, `vacuum analyze docket_runs`)
	req := docket.ClaimRequest{Now: clBase, Limit: benchDemand, OrphanTTL: clTTL, MaxClaimAttempts: math.MaxInt32}
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

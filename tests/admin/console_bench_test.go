package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consoleBenchPartitions is the domain size of the tenants page benchmark.
const consoleBenchPartitions = 100_000

// consoleBenchDomain seeds consoleBenchPartitions partitions t000001...
// under TenantFair at cap 2: every tenth has three due runs (one admitted
// and claimed), every hundredth one more parked timer, the rest are empty.
func consoleBenchDomain(b *testing.B) *pgxpool.Pool {
	b.Helper()
	pool := testkit.NewPool(b)
	testkit.OpenClient(b, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(b, pool, `insert into docket_claim_partitions (scope_key)
		select 't' || lpad(i::text, 6, '0') from generate_series(1, $1::int) i`, consoleBenchPartitions)
	testkit.ExecSQL(b, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		select 'r' || i || '-' || k, 't' || lpad(i::text, 6, '0'), 'g', 'h', '{}', 'running', now() - interval '1 minute'
		  from generate_series(10, $1::int, 10) i, generate_series(1, 3) k`, consoleBenchPartitions)
	testkit.ExecSQL(b, pool, `update docket_runs set wake_at = null, claim_token = gen_random_uuid(), claimed_at = now(), tenant_admitted_at = now()
		where run_id like '%-1'`)
	testkit.ExecSQL(b, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		select 'timer' || i, 't' || lpad(i::text, 6, '0'), 'g', 'h', '{}', 'running', now() + interval '1 day'
		  from generate_series(100, $1::int, 100) i`, consoleBenchPartitions)
	testkit.ExecSQL(b, pool, `analyze`)
	return pool
}

// BenchmarkConsoleTenantsPage serves the tenants page (50 rows) of a domain
// of 100,000 partitions in each sort order: the first page and a deep keyset
// page near the end, reported as first-ms, deep-ms and their ratio deep/first.
func BenchmarkConsoleTenantsPage(b *testing.B) {
	pool := consoleBenchDomain(b)
	h, err := console.New(testkit.Context(b), console.Config{Pool: pool})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ sort, deep string }{
		{"scope", "after_t=t099900"},
		{"unfinished", "after_v=0&after_t=t099900"},
		{"queued", "after_v=0&after_t=t099900"},
		{"debt", "after_v=0&after_t=t099900"},
	} {
		b.Run(tc.sort, func(b *testing.B) {
			first := "/tenants?sort=" + tc.sort
			deep := first + "&" + tc.deep
			var firstTime, deepTime time.Duration
			for b.Loop() {
				firstTime += consoleBenchServe(b, h, first)
				deepTime += consoleBenchServe(b, h, deep)
			}
			n := float64(b.N)
			b.ReportMetric(float64(firstTime.Microseconds())/1000/n, "first-ms")
			b.ReportMetric(float64(deepTime.Microseconds())/1000/n, "deep-ms")
			b.ReportMetric(float64(deepTime)/float64(firstTime), "deep/first")
		})
	}
}

// consoleBenchServe serves one page and returns how long it took.
func consoleBenchServe(b *testing.B, h http.Handler, path string) time.Duration {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	start := time.Now()
	h.ServeHTTP(rec, req)
	took := time.Since(start)
	if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), "<tr>") < 2 {
		b.Fatalf("%s: %d\n%s", path, rec.Code, rec.Body.String())
	}
	return took
}

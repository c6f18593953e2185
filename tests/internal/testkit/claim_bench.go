package testkit

import (
	"testing"
)

// Benchmark shapes. The serial shapes claim from a 20,000-run due backlog in
// 100 tenants, one ClaimDue call per iteration; outside the timer its leases
// are put back at the tail of the backlog with their admission cleared (as a
// finished run replaced by a new one would be), so the backlog and the
// admitted counts stay steady. The parallel shape keeps its claims, like a
// claim ceiling: BenchClaimers loops share b.N calls on a backlog large
// enough never to run dry, with caps that never bind.
const (
	BenchRuns    = 20000
	BenchTenants = 100
	BenchDemand  = 10
	// BenchCap leaves TenantFair 1,000 admission slots over the backlog.
	BenchCap = 10
	// BenchWideDemand fills two TenantFair grants of Q = 8 per call.
	BenchWideDemand = 16
	BenchClaimers   = 8
)

// BenchEngine opens a fresh database with a client of one engine.
type BenchEngine struct {
	Name string
	Open func(b *testing.B, defaultCap int, conns int32) *ClaimEnv
}

// BenchEngines are the engines the claim and worker benchmarks compare.
var BenchEngines = []BenchEngine{
	{"tenant_fair", func(b *testing.B, defaultCap int, conns int32) *ClaimEnv {
		pool := ClaimPoolWithSize(b, conns)
		return &ClaimEnv{T: b, Pool: pool, Client: OpenClient(b, pool, TenantFairConfig(defaultCap))}
	}},
	// Parked mode with nothing dormant: what parking costs a busy domain.
	{"tenant_fair_parked", func(b *testing.B, defaultCap int, conns int32) *ClaimEnv {
		pool := ClaimPoolWithSize(b, conns)
		return &ClaimEnv{T: b, Pool: pool, Client: OpenClient(b, pool, ParkedConfig(defaultCap))}
	}},
	{"legacy", func(b *testing.B, _ int, conns int32) *ClaimEnv {
		pool := ClaimPoolWithSize(b, conns)
		return &ClaimEnv{T: b, Pool: pool, Client: OpenClient(b, pool, LegacyConfig())}
	}},
}

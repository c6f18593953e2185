package oracle

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// ops are the differential operations with their weights: claims dominate
// (some while another transaction holds row locks), then inserts, clock movement and completions; every other lifecycle and
// administration write appears regularly. The first entry is what rapid
// shrinks a step towards.
var ops = []struct {
	weight int
	apply  func(*diffEnv)
}{
	{6, (*diffEnv).opClaim},
	{2, (*diffEnv).opClaimHeld},
	{3, (*diffEnv).opInsert},
	{1, (*diffEnv).opBacklog},
	{2, (*diffEnv).opTick},
	{2, (*diffEnv).opComplete},
	{1, (*diffEnv).opYield},
	{1, (*diffEnv).opSleep},
	{1, (*diffEnv).opWait},
	{1, (*diffEnv).opCheckpoint},
	{1, (*diffEnv).opRelease},
	{1, (*diffEnv).opRefresh},
	{1, (*diffEnv).opAbandon},
	{1, (*diffEnv).opResume},
	{1, (*diffEnv).opSignal},
	{1, (*diffEnv).opRetryPoisoned},
	{1, (*diffEnv).opDefaultCap},
	{1, (*diffEnv).opOverride},
	{1, (*diffEnv).opResetOverride},
	{1, (*diffEnv).opPause},
	{1, (*diffEnv).opResumeTenant},
	{1, (*diffEnv).opDefaultRate},
	{1, (*diffEnv).opTenantRate},
	{1, (*diffEnv).opResetTenantRate},
	{1, (*diffEnv).opDomainPause},
}

// step draws one weighted operation and applies it to both sides.
func (e *diffEnv) step() {
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	pick := rapid.IntRange(0, total-1).Draw(e.rt, "op")
	for _, op := range ops {
		if pick < op.weight {
			op.apply(e)
			return
		}
		pick -= op.weight
	}
}

// TestDifferentialTenantFairModel is the model-based differential test of the
// TenantFair engine: random sequences of inserts, claims (demand 1..12, any
// preference, attempt limits that poison, some while another transaction
// holds row locks), completions, yields, sleeps,
// external waits and resumes, releases, refreshes, abandons, signals, poison
// retries, clock movement past the orphan TTL, default-cap and override
// writes, pauses and resumes of tenants and of the domain, default and
// per-tenant rates and exemptions, with live and stale holders, are applied to the oracle model and to
// a fresh database per check. After every step the claim outcomes and
// inspections and the whole state (cursor, epochs, ring positions and counts,
// markers, claim holders, counters) must be identical. A failure logs the
// shrunk scenario; docs/soak.md has the flags for long runs.
func TestDifferentialTenantFairModel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the differential test needs PostgreSQL")
	}
	testkit.DiffDefaultChecks(t, 30)
	rapid.Check(t, func(rt *rapid.T) {
		e, release := newDfEnv(t, rt, false)
		defer release()
		e.opInsert()
		rt.Repeat(map[string]func(*rapid.T){
			"":     func(*rapid.T) { e.compareState() },
			"step": func(*rapid.T) { e.step() },
		})
	})
}

// TestDifferentialTenantFairModelParked is TestDifferentialTenantFairModel
// with parked partitions on in both the model and the database, plus runtime
// switches of parking: the same operations, and additionally every park, the
// wake sweep's count and each partition's parked_until must be identical.
func TestDifferentialTenantFairModelParked(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the differential test needs PostgreSQL")
	}
	testkit.DiffDefaultChecks(t, 30)
	rapid.Check(t, func(rt *rapid.T) {
		e, release := newDfEnv(t, rt, true)
		defer release()
		e.opInsert()
		rt.Repeat(map[string]func(*rapid.T){
			"":       func(*rapid.T) { e.compareState() },
			"step":   func(*rapid.T) { e.step() },
			"switch": func(*rapid.T) { e.opParkSwitch() },
		})
	})
}

// opParkSwitch turns parking off or on at runtime on both sides, now and
// then.
func (e *diffEnv) opParkSwitch() {
	if rapid.IntRange(0, 9).Draw(e.rt, "park switch") != 0 {
		return
	}
	on := rapid.Bool().Draw(e.rt, "park")
	e.logf("park_dormant %v", on)
	if _, err := e.client.PutClaimPolicyParking(e.ctx, on, docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database parking switch: %v", err)
	}
	// Lifecycle writes that stamp the database clock leave runs due at it:
	// the switch's batch park keeps their partitions awake.
	e.model.SetParkDormantAt(on, time.Now())
}

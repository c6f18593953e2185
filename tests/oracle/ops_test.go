package oracle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
)

// Differential operations that are not holder writes: claims, inserts, clock
// movement and policy administration.

// opClaimHeld is opClaim while another transaction holds the row locks of
// one to three drawn runs, mostly healthy ones a claim could take: the
// database claim skips them, the model is told with HoldRowLock.
func (e *diffEnv) opClaimHeld() {
	var held []string
	for range rapid.IntRange(1, 3).Draw(e.rt, "held rows") {
		r, ok := e.drawRun("held run", func(r oracle.Run) bool { return r.Healthy() && !slices.Contains(held, r.RunID) })
		if !ok {
			break
		}
		if !slices.Contains(held, r.RunID) {
			held = append(held, r.RunID)
		}
	}
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		e.fail("begin the holding transaction: %v", err)
	}
	defer func() { _ = tx.Rollback(e.ctx) }()
	if _, err := tx.Exec(e.ctx, `select 1 from docket_runs where run_id = any($1) for update`, held); err != nil {
		e.fail("hold %v: %v", held, err)
	}
	for _, id := range held {
		if err := e.model.HoldRowLock(id); err != nil {
			e.fail("model hold %s: %v", id, err)
		}
	}
	defer e.model.ReleaseRowLocks()
	e.logf("hold row locks %v", held)
	e.opClaim()
}

// opClaim runs one traced TenantFair claim at the logical clock with a drawn
// demand, preference and attempt limit on both sides and compares every
// outcome (run, class, disposition, poison, order, attempt, eligible time,
// checkpoint) and every inspection (visit, position, scope, disposition,
// cursor movement, outcome count, epoch delta).
func (e *diffEnv) opClaim() {
	demand := rapid.IntRange(1, 12).Draw(e.rt, "demand")
	pref := rapid.SampledFrom([]docket.Preference{docket.PreferNone, docket.PreferReady, docket.PreferExpired}).Draw(e.rt, "preference")
	maxAttempts := rapid.SampledFrom([]int{1000, 2, 3}).Draw(e.rt, "max attempts")
	e.logf("claim demand=%d preference=%q max-attempts=%d at %s", demand, pref, maxAttempts, e.at(e.clock))

	want, err := e.model.Claim(e.clock, e.clock.Add(-ttl), demand, maxAttempts, oracle.Preference(pref))
	if err != nil {
		e.fail("model claim: %v", err)
	}
	tr, err := e.client.TraceClaimDue(e.ctx, docket.ClaimRequest{Now: e.clock, Limit: demand, ClaimTTL: ttl,
		MaxClaimAttempts: maxAttempts, Preference: pref})
	if err != nil {
		e.fail("database claim: %v", err)
	}
	got := e.dbCallLines(tr, demand)
	wantLines := modelCallLines(want)
	if !slices.Equal(wantLines, got) {
		e.fail("claim call differs:\n%s", diff(wantLines, got))
	}
	e.checkCallIdentity(tr)

	leases := tr.Result.Leases
	var summary []string
	visits := map[oracle.Disposition]int{}
	for _, in := range want.Inspections {
		visits[in.Disposition]++
	}
	for _, o := range want.Outcomes {
		if o.Poison {
			summary = append(summary, o.RunID+" poisoned")
			continue
		}
		l := leases[0]
		leases = leases[1:]
		e.tokens[o.Token] = l.ClaimToken
		e.leases = append(e.leases, &lease{runID: o.RunID, tenant: o.Scope, modelToken: o.Token,
			dbToken: l.ClaimToken, seq: l.CheckpointSeq})
		summary = append(summary, fmt.Sprintf("%s %s", o.RunID, o.Class))
	}
	e.log[len(e.log)-1] += fmt.Sprintf(" -> cursor %d->%d, visits %v, outcomes [%s]",
		want.CursorBefore, want.CursorAfter, visits, strings.Join(summary, ", "))
}

// dbCallLines renders a database claim trace like modelCallLines.
func (e *diffEnv) dbCallLines(tr docket.ClaimTrace, demand int) []string {
	var out []string
	leases, poisons := tr.Result.Leases, tr.Result.Poisoned
	for _, o := range tr.Outcomes {
		tenant, _ := o.Scope.TenantID()
		var attempt int
		var eligible time.Time
		var seq int64
		if o.Poisoned {
			if len(poisons) == 0 {
				e.fail("traced poison %s has no poisoned result", o.RunID)
			}
			p := poisons[0]
			poisons = poisons[1:]
			attempt, eligible, seq = p.Attempts, p.EligibleAt, p.CheckpointSeq
		} else {
			if len(leases) == 0 {
				e.fail("traced lease %s has no lease result", o.RunID)
			}
			l := leases[0]
			leases = leases[1:]
			attempt, eligible, seq = l.Attempt, l.EligibleAt, l.CheckpointSeq
		}
		out = append(out, outcomeLine(o.Visit, o.Ordinal, o.RunID, tenant, string(o.Class), o.Disposition,
			o.Poisoned, attempt, eligible, seq))
	}
	for _, in := range tr.Inspections {
		var until time.Time
		if in.ParkedUntil != nil {
			until = *in.ParkedUntil
		}
		out = append(out, inspectionLine(in.Visit, in.Demand, in.CursorBefore, in.CursorAfter, in.RingPosition,
			in.ScopeKey, string(in.Disposition), in.Outcomes, int64(in.EpochDelta), in.Parked, until, in.Woken))
	}
	if in := len(tr.Inspections); in > 0 && tr.Inspections[0].Demand != demand {
		e.fail("traced demand %d, requested %d", tr.Inspections[0].Demand, demand)
	}
	return out
}

// checkCallIdentity checks that every row of one call carries the same call
// token and transaction id.
func (e *diffEnv) checkCallIdentity(tr docket.ClaimTrace) {
	for _, in := range tr.Inspections {
		first := tr.Inspections[0]
		if in.CallToken != first.CallToken || in.TransactionID != first.TransactionID {
			e.fail("inspection %+v belongs to another call than %+v", in, first)
		}
	}
	for _, o := range tr.Outcomes {
		if len(tr.Inspections) > 0 && (o.CallToken != tr.Inspections[0].CallToken || o.TransactionID != tr.Inspections[0].TransactionID) {
			e.fail("outcome %+v belongs to another call", o)
		}
	}
}

// opInsert inserts 1..4 runs of drawn tenants due relative to the logical
// clock, one at a time or as one batch.
func (e *diffEnv) opInsert() {
	e.insert(rapid.IntRange(1, 4).Draw(e.rt, "inserts"), e.tenants)
}

// opBacklog inserts a backlog of 9..24 runs of one tenant, more than one
// grant (Q = 8) or one visit's frozen set (K = 16) can take.
func (e *diffEnv) opBacklog() {
	tenant := rapid.SampledFrom(e.tenants).Draw(e.rt, "backlog tenant")
	e.insert(rapid.IntRange(9, 24).Draw(e.rt, "backlog"), []string{tenant})
}

// insert inserts n runs of tenants drawn from tenants.
func (e *diffEnv) insert(n int, tenants []string) {
	batch := rapid.Bool().Draw(e.rt, "batch")
	var runs []docket.NewRun
	var batchRuns []oracle.NewRun
	var desc []string
	for range n {
		tenant := rapid.SampledFrom(tenants).Draw(e.rt, "tenant")
		offset := rapid.SampledFrom([]time.Duration{0, -time.Minute, -10 * time.Minute, time.Minute,
			10 * time.Minute, 2 * time.Hour}).Draw(e.rt, "wake offset")
		e.serial++
		run := docket.NewRun{RunID: fmt.Sprintf("r%d", e.serial), Scope: docket.Tenant(tenant), GraphID: "g",
			GraphHash: "h1", State: []byte(`{}`), WakeAt: e.clock.Add(offset)}
		runs = append(runs, run)
		desc = append(desc, fmt.Sprintf("%s/%s wake %s", run.RunID, tenant, e.at(run.WakeAt)))
		batchRuns = append(batchRuns, oracle.NewRun{Scope: tenant, RunID: run.RunID, WakeAt: run.WakeAt})
	}
	e.logf("insert batch=%t [%s]", batch, strings.Join(desc, ", "))
	if batch {
		if err := e.model.InsertRuns(batchRuns); err != nil {
			e.fail("model batch insert: %v", err)
		}
		if _, err := e.client.InsertRuns(e.ctx, runs); err != nil {
			e.fail("database batch insert: %v", err)
		}
		return
	}
	for i, run := range runs {
		if err := e.model.InsertRun(batchRuns[i].Scope, run.RunID, run.WakeAt); err != nil {
			e.fail("model insert: %v", err)
		}
		if _, err := e.client.InsertRun(e.ctx, run); err != nil {
			e.fail("database insert: %v", err)
		}
	}
}

// opTick moves the logical clock forward; a step beyond the orphan TTL
// expires every claim taken before it.
func (e *diffEnv) opTick() {
	d := rapid.SampledFrom([]time.Duration{time.Second, 30 * time.Second, 5 * time.Minute, 30 * time.Minute,
		ttl + time.Minute, 3 * time.Hour}).Draw(e.rt, "tick")
	e.clock = e.clock.Add(d)
	e.logf("tick %s -> %s", d, e.at(e.clock))
}

// opDefaultCap writes the persisted default cap on both sides.
func (e *diffEnv) opDefaultCap() {
	c := rapid.IntRange(1, 4).Draw(e.rt, "default cap")
	e.logf("default cap %d", c)
	if err := e.model.SetDefaultCap(c); err != nil {
		e.fail("model default cap: %v", err)
	}
	if _, err := e.client.PutClaimPolicyDefault(e.ctx, c, docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database default cap: %v", err)
	}
}

// drawScope draws a tenant for an override, including one that never has
// runs (its partition, and ring position, is created by the write).
func (e *diffEnv) drawScope() string {
	return rapid.SampledFrom(append(slices.Clone(e.tenants), "idle")).Draw(e.rt, "override scope")
}

// opOverride sets a cap override on both sides.
func (e *diffEnv) opOverride() {
	scope := e.drawScope()
	c := rapid.IntRange(1, 4).Draw(e.rt, "override")
	e.logf("override %s = %d", scope, c)
	if err := e.model.SetOverride(scope, c); err != nil {
		e.fail("model override: %v", err)
	}
	if _, err := e.client.PutClaimPolicyOverride(e.ctx, docket.Tenant(scope), c, docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database override: %v", err)
	}
}

// opResetOverride removes a cap override on both sides.
func (e *diffEnv) opResetOverride() {
	scope := e.drawScope()
	e.logf("reset override %s", scope)
	if err := e.model.ResetOverride(scope); err != nil {
		e.fail("model reset override: %v", err)
	}
	if _, err := e.client.ResetClaimPolicyOverride(e.ctx, docket.Tenant(scope), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database reset override: %v", err)
	}
}

// opPause pauses a scope on both sides: its visits end as paused until a
// resume.
func (e *diffEnv) opPause() {
	scope := e.drawScope()
	e.logf("pause %s", scope)
	e.model.Pause(scope)
	if _, err := e.client.PauseTenant(e.ctx, docket.Tenant(scope), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database pause: %v", err)
	}
}

// opResumeTenant resumes a scope on both sides.
func (e *diffEnv) opResumeTenant() {
	scope := e.drawScope()
	e.logf("resume tenant %s", scope)
	e.model.Resume(scope)
	if _, err := e.client.ResumeTenant(e.ctx, docket.Tenant(scope), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database resume tenant: %v", err)
	}
}

// drawRate draws a rate the logical clock's ticks meet at its edges, or the
// zero rate (none; for a tenant, the exemption).
func (e *diffEnv) drawRate() oracle.Rate {
	if rapid.IntRange(0, 3).Draw(e.rt, "no rate") == 0 {
		return oracle.Rate{}
	}
	return oracle.Rate{
		Limit:  rapid.IntRange(1, 3).Draw(e.rt, "rate limit"),
		Period: rapid.SampledFrom([]time.Duration{30 * time.Second, 5 * time.Minute, time.Hour}).Draw(e.rt, "rate period"),
		Burst:  rapid.IntRange(0, 2).Draw(e.rt, "rate burst"),
	}
}

// docketRate is r as the facade's RateLimit.
func docketRate(r oracle.Rate) docket.RateLimit {
	return docket.RateLimit{Limit: r.Limit, Period: r.Period, Burst: r.Burst}
}

// opDefaultRate writes the domain's default rate on both sides.
func (e *diffEnv) opDefaultRate() {
	r := e.drawRate()
	e.logf("default rate %+v", r)
	if err := e.model.SetDefaultRate(r); err != nil {
		e.fail("model default rate: %v", err)
	}
	if _, err := e.client.PutClaimPolicyRate(e.ctx, docketRate(r), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database default rate: %v", err)
	}
}

// opTenantRate gives a scope its own rate, or exempts it, on both sides.
func (e *diffEnv) opTenantRate() {
	scope := e.drawScope()
	r := e.drawRate()
	e.logf("tenant rate %s %+v", scope, r)
	if err := e.model.SetRate(scope, r); err != nil {
		e.fail("model tenant rate: %v", err)
	}
	if _, err := e.client.PutTenantRate(e.ctx, docket.Tenant(scope), docketRate(r), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database tenant rate: %v", err)
	}
}

// opResetTenantRate removes a scope's own rate or exemption on both sides.
func (e *diffEnv) opResetTenantRate() {
	scope := e.drawScope()
	e.logf("reset tenant rate %s", scope)
	e.model.ResetRate(scope)
	if _, err := e.client.ResetTenantRate(e.ctx, docket.Tenant(scope), docket.ClaimPolicyWriteOptions{}); err != nil {
		e.fail("database reset tenant rate: %v", err)
	}
}

// opDomainPause pauses or resumes the whole domain on both sides.
func (e *diffEnv) opDomainPause() {
	pause := rapid.Bool().Draw(e.rt, "pause domain")
	e.logf("domain paused %v", pause)
	var err error
	if pause {
		e.model.PauseDomain()
		_, err = e.client.PauseDomain(e.ctx, docket.ClaimPolicyWriteOptions{})
	} else {
		e.model.ResumeDomain()
		_, err = e.client.ResumeDomain(e.ctx, docket.ClaimPolicyWriteOptions{})
	}
	if err != nil {
		e.fail("database domain pause %v: %v", pause, err)
	}
}

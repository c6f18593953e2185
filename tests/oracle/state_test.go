package oracle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/oracle"
)

// The state the differential test compares after every operation, rendered
// as lines so that a mismatch prints as a readable line diff: the policy
// (default cap and durable cursor), every partition (ring position, override,
// admission epoch, unfinished count, the admitted and claimed counts, the
// park and the pause) and
// every run (status, wake, claim holder, counters, poison and marker).

// diffTime renders an optional timestamp.
func diffTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// opt returns &t when set, else nil.
func opt(set bool, t time.Time) *time.Time {
	if !set {
		return nil
	}
	return &t
}

// runLine renders one run.
func runLine(runID, scope, status string, wake *time.Time, token string, claimedAt *time.Time,
	attempts, abandons int, seq int64, poisonedAt *time.Time, reason string, admittedAt *time.Time) string {
	return fmt.Sprintf("run %s scope=%s status=%s wake=%s claim=%s@%s attempts=%d abandons=%d seq=%d poison=%s/%s admitted=%s",
		runID, scope, status, diffTime(wake), token, diffTime(claimedAt), attempts, abandons, seq,
		diffTime(poisonedAt), reason, diffTime(admittedAt))
}

// partitionLine renders one partition; parked is "-" (awake), "write"
// (parked until a write) or the time it is parked until; rate is rateText's.
func partitionLine(scope string, position int64, override int, epoch int64, unfinished, admitted, claims int, parked string, paused bool, rate string) string {
	return fmt.Sprintf("partition %s position=%d override=%d epoch=%d unfinished=%d admitted=%d claims=%d parked=%s paused=%v rate=%s",
		scope, position, override, epoch, unfinished, admitted, claims, parked, paused, rate)
}

// rateText renders a rate, an exemption and a rate time for the state lines.
func rateText(r oracle.Rate, exempt bool, tat *time.Time) string {
	return fmt.Sprintf("%d/%s+%d exempt=%v tat=%s", r.Limit, r.Period, r.Burst, exempt, diffTime(tat))
}

// diffParked renders a park state for partitionLine.
func diffParked(parked bool, until time.Time) string {
	switch {
	case !parked:
		return "-"
	case until.IsZero():
		return "write"
	}
	return until.UTC().Format(time.RFC3339Nano)
}

// modelState renders the model.
func (e *diffEnv) modelState() []string {
	out := []string{fmt.Sprintf("policy default=%d cursor=%d rate=%s", e.model.DefaultCap(), e.model.Cursor(),
		rateText(e.model.DefaultRate(), false, nil))}
	for _, p := range e.model.Partitions() {
		c := e.model.Counts(p.Scope, e.clock)
		out = append(out, partitionLine(p.Scope, p.Position, p.Override, p.Epoch, p.Unfinished, c.Admitted, c.LiveClaims,
			diffParked(p.Parked, p.ParkedUntil), p.Paused, rateText(p.Rate, p.RateExempt, opt(!p.RateTAT.IsZero(), p.RateTAT))))
	}
	for _, r := range e.model.Runs() {
		token := "-"
		if r.Token != "" {
			token = "unmapped:" + r.Token
			if db, ok := e.tokens[r.Token]; ok {
				token = db.String()
			}
		}
		out = append(out, runLine(r.RunID, r.Scope, string(r.Status), opt(r.HasWake, r.WakeAt), token,
			opt(r.Claimed(), r.ClaimedAt), r.Attempts, r.Abandons, r.CheckpointSeq,
			opt(r.Poisoned, r.PoisonedAt), r.PoisonReason, opt(r.Admitted, r.AdmittedAt)))
	}
	return out
}

// dbState renders the database.
func (e *diffEnv) dbState() []string {
	var defaultCap, rateLimit, rateBurst int
	var cursor, ratePeriod int64
	if err := e.pool.QueryRow(e.ctx, `select max_active, scan_ring_position, coalesce(rate_limit, 0),
			coalesce(round(extract(epoch from rate_period) * 1000000)::bigint, 0), coalesce(rate_burst, 0)
		  from docket_claim_policy where id = 1`).
		Scan(&defaultCap, &cursor, &rateLimit, &ratePeriod, &rateBurst); err != nil {
		e.fail("read policy: %v", err)
	}
	out := []string{fmt.Sprintf("policy default=%d cursor=%d rate=%s", defaultCap, cursor,
		rateText(oracle.Rate{Limit: rateLimit, Period: time.Duration(ratePeriod) * time.Microsecond, Burst: rateBurst}, false, nil))}
	rows, _ := e.pool.Query(e.ctx, `select s.scope_key, s.ring_position, coalesce(p.max_active, 0), p.admission_epoch,
			s.unfinished_count,
			(select count(*) from docket_runs r where r.scope_key = s.scope_key and r.status = 'running'
			    and r.poisoned_at is null and r.tenant_admitted_at is not null),
			(select count(*) from docket_runs r where r.scope_key = s.scope_key and r.claim_token is not null),
			s.parked_until is not null, coalesce(s.parked_until = 'infinity', false),
			case when s.parked_until <> 'infinity' then s.parked_until end,
			p.paused, coalesce(p.rate_limit, 0),
			coalesce(round(extract(epoch from p.rate_period) * 1000000)::bigint, 0), coalesce(p.rate_burst, 0),
			p.rate_unlimited, p.rate_tat
		  from docket_claim_schedule s join docket_claim_partitions p using (scope_key)
		 order by s.ring_position`)
	parts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var scope string
		var position, epoch int64
		var override, unfinished, admitted, claims int
		var parked, forGood, paused, exempt bool
		var until, tat *time.Time
		var rateLimit, rateBurst int
		var ratePeriod int64
		err := row.Scan(&scope, &position, &override, &epoch, &unfinished, &admitted, &claims, &parked, &forGood, &until, &paused,
			&rateLimit, &ratePeriod, &rateBurst, &exempt, &tat)
		var at time.Time
		if until != nil && !forGood {
			at = *until
		}
		rate := oracle.Rate{Limit: rateLimit, Period: time.Duration(ratePeriod) * time.Microsecond, Burst: rateBurst}
		return partitionLine(scope, position, override, epoch, unfinished, admitted, claims, diffParked(parked, at), paused,
			rateText(rate, exempt, tat)), err
	})
	if err != nil {
		e.fail("read partitions: %v", err)
	}
	out = append(out, parts...)
	rows, _ = e.pool.Query(e.ctx, `select run_id, scope_key, status, wake_at, coalesce(claim_token::text, '-'), claimed_at,
			claim_attempts, claim_abandons, checkpoint_seq, poisoned_at, coalesce(poison_reason, ''), tenant_admitted_at
		  from docket_runs order by id`)
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (string, error) {
		var runID, scope, status, token, reason string
		var wake, claimedAt, poisonedAt, admittedAt *time.Time
		var attempts, abandons int
		var seq int64
		err := row.Scan(&runID, &scope, &status, &wake, &token, &claimedAt, &attempts, &abandons, &seq,
			&poisonedAt, &reason, &admittedAt)
		return runLine(runID, scope, status, wake, token, claimedAt, attempts, abandons, seq, poisonedAt, reason, admittedAt), err
	})
	if err != nil {
		e.fail("read runs: %v", err)
	}
	return append(out, runs...)
}

// compareState fails the check when the database and the model differ.
func (e *diffEnv) compareState() {
	e.rt.Helper()
	want, got := e.modelState(), e.dbState()
	if slices.Equal(want, got) {
		return
	}
	e.fail("state differs after the last operation:\n%s", diff(want, got))
}

// diff renders a line diff of the model's and the database's lines: "-"
// lines only the model has, "+" lines only the database has, based on a
// longest common subsequence.
func diff(model, db []string) string {
	// lcs[i][j] is the LCS length of model[i:] and db[j:].
	lcs := make([][]int, len(model)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(db)+1)
	}
	for i := len(model) - 1; i >= 0; i-- {
		for j := len(db) - 1; j >= 0; j-- {
			if model[i] == db[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(model) || j < len(db) {
		switch {
		case i < len(model) && j < len(db) && model[i] == db[j]:
			fmt.Fprintf(&b, "    %s\n", model[i])
			i, j = i+1, j+1
		case j == len(db) || (i < len(model) && lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&b, "  - model    %s\n", model[i])
			i++
		default:
			fmt.Fprintf(&b, "  + database %s\n", db[j])
			j++
		}
	}
	return b.String()
}

// outcomeLine renders one outcome of a claim call.
func outcomeLine(visit, ordinal int, runID, scope, class, disposition string, poison bool,
	attempt int, eligible time.Time, seq int64) string {
	return fmt.Sprintf("outcome v%d #%d %s scope=%s class=%s disposition=%s poison=%t attempt=%d eligible=%s seq=%d",
		visit, ordinal, runID, scope, class, disposition, poison, attempt, eligible.UTC().Format(time.RFC3339Nano), seq)
}

// inspectionLine renders one inspection of a claim call.
func inspectionLine(visit, demand int, before, after, position int64, scope, disposition string, outcomes int, epoch int64,
	parked bool, until time.Time, woken int) string {
	return fmt.Sprintf("visit %d demand=%d cursor %d->%d position=%d scope=%s %s outcomes=%d epoch+%d parked=%s woken=%d",
		visit, demand, before, after, position, scope, disposition, outcomes, epoch, diffParked(parked, until), woken)
}

// modelCallLines renders a model claim result.
func modelCallLines(res oracle.ClaimResult) []string {
	var out []string
	for _, o := range res.Outcomes {
		out = append(out, outcomeLine(o.Visit, o.Ordinal, o.RunID, o.Scope, string(o.Class), string(o.Disposition),
			o.Poison, o.ClaimAttempt, o.EligibleAt, o.CheckpointSeq))
	}
	for _, in := range res.Inspections {
		out = append(out, inspectionLine(in.Visit, res.Demand, in.CursorBefore, in.CursorAfter, in.Position,
			in.Scope, string(in.Disposition), in.Outcomes, in.EpochDelta, in.Parked, in.ParkedUntil, in.Woken))
	}
	return out
}

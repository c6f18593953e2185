package oracle

import (
	"time"
)

// Rate is an admission rate of a partition (docket.RateLimit): at most Limit
// queued promotions per Period and Burst more at once. The zero Rate is no
// rate. The engine keeps one time per partition (its rate time, Partition.
// RateTAT): a promotion at now needs now >= RateTAT - Burst*Step and moves
// RateTAT to max(RateTAT, now) + Step.
type Rate struct {
	Limit  int           // promotions per Period, 1..MaxRateLimit
	Period time.Duration // MinRatePeriod..MaxRatePeriod, whole microseconds
	Burst  int           // promotions beyond one at once, 0..MaxRateBurst
}

// Bounds of a Rate (docket_claim_policy_rate_check and
// docket_claim_partitions_rate_check).
const (
	MaxRateLimit  = 1_000_000
	MaxRateBurst  = 1_000_000
	MinRatePeriod = time.Millisecond
	MaxRatePeriod = 7 * 24 * time.Hour
)

// IsZero reports the zero Rate.
func (r Rate) IsZero() bool { return r == Rate{} }

// Step is Period / Limit rounded up to the microsecond (docket_rate_step).
func (r Rate) Step() time.Duration {
	if r.Limit <= 0 {
		return 0
	}
	us := r.Period.Microseconds()
	return time.Duration((us+int64(r.Limit)-1)/int64(r.Limit)) * time.Microsecond
}

// tolerance is Burst steps: how far ahead of now the rate time may be for
// a promotion to be allowed.
func (r Rate) tolerance() time.Duration { return r.Step() * time.Duration(r.Burst) }

// MaxPromotions is the rate's guarantee over any half-open interval of
// length l: at most Burst + ceil(l / Step) promotions, so Limit + Burst in
// any interval of length Period.
func (r Rate) MaxPromotions(l time.Duration) int {
	step := r.Step()
	return r.Burst + int((l+step-1)/step)
}

func validRate(op string, r Rate) error {
	switch {
	case r.IsZero():
		return nil
	case r.Limit < 1 || r.Limit > MaxRateLimit, r.Burst < 0 || r.Burst > MaxRateBurst,
		r.Period < MinRatePeriod || r.Period > MaxRatePeriod, r.Period%time.Microsecond != 0:
		return opError(op, ErrInvalidRate, "%+v", r)
	}
	return nil
}

// SetDefaultRate writes the domain's default rate (the zero Rate removes
// it); an invalid rate is ErrInvalidRate and changes nothing. Parked
// partitions with queued work wake (docket's PutClaimPolicyRate).
func (m *Model) SetDefaultRate(r Rate) error {
	if err := validRate("SetDefaultRate", r); err != nil {
		return err
	}
	m.defaultRate = r
	for _, p := range m.order {
		m.wakeRateParked(p)
	}
	return nil
}

// SetRate gives scope its own rate; the zero Rate exempts it from the
// default. Like SetOverride it creates the partition of an unknown scope;
// a parked partition with queued work wakes.
func (m *Model) SetRate(scope string, r Rate) error {
	if err := validRate("SetRate", r); err != nil {
		return err
	}
	p := m.partitionFor(scope)
	p.Rate, p.RateExempt = r, r.IsZero()
	m.wakeRateParked(p)
	return nil
}

// ResetRate removes scope's own rate or exemption, so the default applies.
func (m *Model) ResetRate(scope string) {
	p := m.partitionFor(scope)
	p.Rate, p.RateExempt = Rate{}, false
	m.wakeRateParked(p)
}

// EffectiveRate is scope's own rate, else none when it is exempt, else the
// domain's default.
func (m *Model) EffectiveRate(scope string) Rate {
	p, ok := m.parts[scope]
	switch {
	case ok && !p.Rate.IsZero():
		return p.Rate
	case ok && p.RateExempt:
		return Rate{}
	}
	return m.defaultRate
}

// wakeRateParked unparks p after a rate write when it holds a queued run,
// due or not (WakeRateParkedPartitions).
func (m *Model) wakeRateParked(p *Partition) {
	if !p.Parked || p.Unfinished == 0 {
		return
	}
	for _, r := range m.runs {
		if r.Scope == p.Scope && r.Healthy() && !r.Claimed() && !r.Admitted {
			unpark(p)
			return
		}
	}
}

// rateGate is the rate of one visit: the rate, the partition's rate time on
// entry and the promotions of the visit so far.
type rateGate struct {
	rate     Rate
	tat      time.Time // zero: never promoted under a rate
	promoted int
}

// allows reports whether the next promotion has a token at now.
func (g *rateGate) allows(now time.Time) bool {
	if g.rate.IsZero() {
		return true
	}
	next := g.tat
	if g.promoted > 0 {
		next = latest(g.tat, now).Add(g.rate.Step() * time.Duration(g.promoted))
	}
	return next.IsZero() || !now.Before(next.Add(-g.rate.tolerance()))
}

// after returns the rate time after the visit's promotions.
func (g *rateGate) after(now time.Time) time.Time {
	if g.rate.IsZero() || g.promoted == 0 {
		return g.tat
	}
	return latest(g.tat, now).Add(g.rate.Step() * time.Duration(g.promoted))
}

// tokenAt is when the next token comes after a rate_limited visit.
func (g *rateGate) tokenAt() time.Time { return g.tat.Add(-g.rate.tolerance()) }

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// tryRatePark parks p after a rate_limited visit when it is otherwise
// dormant at now: no healthy claimed row and no admitted row due. It parks
// until the next token, or the earliest wake of an admitted row if sooner,
// and reports whether it parked.
func (m *Model) tryRatePark(p *Partition, now, tokenAt time.Time) bool {
	until := tokenAt
	for _, r := range m.runs {
		if r.Scope != p.Scope || !r.Healthy() {
			continue
		}
		if r.Claimed() || (r.Admitted && !r.WakeAt.After(now)) {
			return false
		}
		if r.Admitted && r.WakeAt.Before(until) {
			until = r.WakeAt
		}
	}
	p.Parked, p.ParkedUntil = true, until
	return true
}

// CheckRate verifies the rate guarantee on the committed promotion times of
// one partition under one Rate, in commit order: for promotions i < j,
// times[j] - times[i] >= (j - i - Burst) * Step, so no half-open interval of
// length l holds more than r.MaxPromotions(l) of them. It returns a
// *Violation (InvRate, Event = j) for the first pair that breaks it.
func CheckRate(times []time.Time, r Rate) error {
	step := r.Step()
	for j := range times {
		for i := j - r.Burst - 1; i >= 0; i-- {
			if need := step * time.Duration(j-i-r.Burst); times[j].Sub(times[i]) < need {
				return violation(InvRate, j, "promotions %d and %d are %s apart, want at least %s (%d/%s burst %d)",
					i, j, times[j].Sub(times[i]), need, r.Limit, r.Period, r.Burst)
			}
		}
	}
	return nil
}

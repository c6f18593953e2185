package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Bounds of a RateLimit, the ones the named checks
// docket_claim_policy_rate_check and docket_claim_partitions_rate_check hold.
const (
	// MaxRateLimit is the largest Limit of a rate.
	MaxRateLimit = 1_000_000
	// MaxRateBurst is the largest Burst of a rate.
	MaxRateBurst = 1_000_000
	// MinRatePeriod is the shortest Period of a rate.
	MinRatePeriod = time.Millisecond
	// MaxRatePeriod is the longest Period of a rate.
	MaxRatePeriod = 7 * 24 * time.Hour
)

// ErrInvalidRate reports a RateLimit outside its bounds; nothing is written.
var ErrInvalidRate = errors.New("docket: invalid rate")

// rateChecks are the named checks of the two rate columns' triples.
var rateChecks = map[string]bool{
	"docket_claim_policy_rate_check":     true,
	"docket_claim_partitions_rate_check": true,
}

// RateLimit is an admission rate of TenantFair: at most Limit queued
// promotions per Period, and Burst more at once after a quiet spell. Only
// promotions (queued to admitted) spend a token: reacquisition of admitted
// work, an expired steal and a poison never do, and a queued poison needs a
// token as it needs a free slot but takes none. A partition with a rate
// promotes at most Limit + Burst runs in any interval of length Period, and
// at most Burst + ceil(L * Limit / Period) in any interval of length L.
// Promotions are spaced Step apart once the burst is spent. The zero
// RateLimit means no rate.
type RateLimit struct {
	// Limit is the number of promotions per Period, 1..MaxRateLimit.
	Limit int
	// Period is the window of Limit, MinRatePeriod..MaxRatePeriod, in whole
	// microseconds.
	Period time.Duration
	// Burst is how many promotions beyond one a rested partition may take
	// at once, 0..MaxRateBurst. With Burst 0 promotions are Step apart.
	Burst int
}

// IsZero reports the zero RateLimit: no rate.
func (r RateLimit) IsZero() bool { return r == RateLimit{} }

// Step is the spacing of promotions at the rate, Period / Limit rounded up
// to the microsecond (the database's docket_rate_step), so the rate is never
// exceeded. The zero RateLimit has step 0.
func (r RateLimit) Step() time.Duration {
	if r.Limit <= 0 {
		return 0
	}
	us := r.Period.Microseconds()
	return time.Duration((us+int64(r.Limit)-1)/int64(r.Limit)) * time.Microsecond
}

// String renders the rate as "10/1s" or "10/1s burst 5"; the zero rate as
// "none".
func (r RateLimit) String() string {
	switch {
	case r.IsZero():
		return "none"
	case r.Burst == 0:
		return fmt.Sprintf("%d/%s", r.Limit, r.Period)
	}
	return fmt.Sprintf("%d/%s burst %d", r.Limit, r.Period, r.Burst)
}

// validate checks the bounds the named checks hold; the zero rate is valid.
func (r RateLimit) validate() error {
	switch {
	case r.IsZero():
		return nil
	case r.Limit < 1 || r.Limit > MaxRateLimit:
		return fmt.Errorf("%w: limit %d outside 1..%d", ErrInvalidRate, r.Limit, MaxRateLimit)
	case r.Period < MinRatePeriod || r.Period > MaxRatePeriod:
		return fmt.Errorf("%w: period %s outside %s..%s", ErrInvalidRate, r.Period, MinRatePeriod, MaxRatePeriod)
	case r.Period%time.Microsecond != 0:
		return fmt.Errorf("%w: period %s is not a whole number of microseconds", ErrInvalidRate, r.Period)
	case r.Burst < 0 || r.Burst > MaxRateBurst:
		return fmt.Errorf("%w: burst %d outside 0..%d", ErrInvalidRate, r.Burst, MaxRateBurst)
	}
	return nil
}

// columns returns the rate's three nullable columns (all null for the zero
// rate).
func (r RateLimit) columns() (limit *int32, period pgtype.Interval, burst *int32) {
	if r.IsZero() {
		return nil, pgtype.Interval{}, nil
	}
	l, b := int32(r.Limit), int32(r.Burst)
	return &l, pgtype.Interval{Microseconds: r.Period.Microseconds(), Valid: true}, &b
}

// rateOf reads the three columns back; any null makes the zero rate (the
// checks keep them null together).
func rateOf(limit *int32, period pgtype.Interval, burst *int32) RateLimit {
	if limit == nil || burst == nil || !period.Valid {
		return RateLimit{}
	}
	us := period.Microseconds + int64(period.Days)*24*3600*1e6 + int64(period.Months)*30*24*3600*1e6
	return RateLimit{Limit: int(*limit), Period: time.Duration(us) * time.Microsecond, Burst: int(*burst)}
}

// tokensAt returns how many promotions the rate allows at once at now, given
// the partition's stored rate time (nil: never promoted under a rate), and
// when the next token comes if there is none now.
func (r RateLimit) tokensAt(tat *time.Time, now time.Time) (int, *time.Time) {
	if r.IsZero() {
		return 0, nil
	}
	if tat == nil || !tat.After(now) {
		return r.Burst + 1, nil
	}
	step := r.Step()
	first := tat.Add(-step * time.Duration(r.Burst))
	if now.Before(first) {
		return 0, &first
	}
	return min(int(now.Sub(first)/step)+1, r.Burst+1), nil
}

// mapRateError turns a refusal of the rate checks into ErrInvalidRate.
func mapRateError(op string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23514" && rateChecks[pgErr.ConstraintName] {
		return fmt.Errorf("%w: %s (%s)", ErrInvalidRate, op, pgErr.ConstraintName)
	}
	return fmt.Errorf("docket: %s: %w", op, err)
}

// RateSource says where a scope's effective rate comes from.
type RateSource string

const (
	// RateNone means the scope has no rate: no override and no default.
	RateNone RateSource = ""
	// RateFromDefault means the scope inherits the domain's default rate.
	RateFromDefault RateSource = "default"
	// RateFromOverride means the scope has its own rate.
	RateFromOverride RateSource = "override"
	// RateExempt means the scope is exempt from the domain's default.
	RateExempt RateSource = "exempt"
)

// TenantRate is the rate state of one owner partition after a write.
type TenantRate struct {
	// Scope is the owner the partition belongs to.
	Scope Scope
	// Rate is the partition's own rate; zero when it inherits or is exempt.
	Rate RateLimit
	// Exempt reports a partition exempt from the domain's default rate.
	Exempt bool
	// Version is the partition version after the write (the one cap
	// overrides and pauses move too).
	Version int64
}

// PutClaimPolicyRate sets the domain's default admission rate, the rate of
// every scope without its own (see RateLimit); the zero RateLimit removes
// it. The policy version moves by one. Rates are durable runtime state:
// startup never touches them. Parked partitions that hold queued work wake
// in the same transaction, so a looser
// rate takes effect at the next claim. An invalid rate (ErrInvalidRate) or a
// version mismatch (ErrStale) writes nothing.
func (c *store) PutClaimPolicyRate(ctx context.Context, rate RateLimit, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyRate, func() (ClaimPolicyDefault, error) {
		if err := rate.validate(); err != nil {
			return ClaimPolicyDefault{}, err
		}
		var written dbgen.DocketClaimPolicy
		err := c.writePolicy(ctx, opts, nil, func(q *dbgen.Queries) error {
			limit, period, burst := rate.columns()
			var err error
			written, err = q.PutClaimPolicyRate(ctx, dbgen.PutClaimPolicyRateParams{
				RateLimit: limit, RatePeriod: period, RateBurst: burst})
			if err != nil {
				return mapRateError("writing the default rate", err)
			}
			return c.wakeRateParked(ctx, q, nil)
		})
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		return claimPolicyDefaultOf(written), nil
	})
}

// PutTenantRate gives scope its own admission rate, overriding the domain's
// default; the zero RateLimit exempts scope from the default instead. The
// partition version moves by one and a missing partition is created, as for
// a cap override. A parked partition of scope with queued work wakes in the
// same transaction. An invalid rate (ErrInvalidRate), an invalid scope
// (ErrInvalidArgument, ErrTenantRequired) or a version mismatch (ErrStale)
// writes nothing.
func (c *store) PutTenantRate(ctx context.Context, scope Scope, rate RateLimit, opts ClaimPolicyWriteOptions) (TenantRate, error) {
	return timed(ctx, c.telemetry, opPutTenantRate, func() (TenantRate, error) {
		if err := rate.validate(); err != nil {
			return TenantRate{}, err
		}
		return c.writeTenantRate(ctx, scope, rate, rate.IsZero(), opts)
	})
}

// ResetTenantRate removes scope's own rate or exemption, so the domain's
// default applies again. Like PutTenantRate it moves the partition version
// and creates a missing partition; an invalid scope or a version mismatch
// writes nothing.
func (c *store) ResetTenantRate(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (TenantRate, error) {
	return timed(ctx, c.telemetry, opResetTenantRate, func() (TenantRate, error) {
		return c.writeTenantRate(ctx, scope, RateLimit{}, false, opts)
	})
}

// writeTenantRate writes a partition's rate or exemption (writePartition).
func (c *store) writeTenantRate(ctx context.Context, scope Scope, rate RateLimit, exempt bool, opts ClaimPolicyWriteOptions) (TenantRate, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return TenantRate{}, err
	}
	var written dbgen.DocketClaimPartition
	err = c.writePartition(ctx, key, opts, func(q *dbgen.Queries) error {
		limit, period, burst := rate.columns()
		written, err = q.PutClaimPartitionRate(ctx, dbgen.PutClaimPartitionRateParams{
			RateLimit: limit, RatePeriod: period, RateBurst: burst,
			RateUnlimited: exempt, ScopeKey: key})
		if err != nil {
			return mapRateError("writing the tenant rate", err)
		}
		return c.wakeRateParked(ctx, q, &key)
	})
	if err != nil {
		return TenantRate{}, err
	}
	return TenantRate{
		Scope:   scope,
		Rate:    rateOf(written.RateLimit, written.RatePeriod, written.RateBurst),
		Exempt:  written.RateUnlimited,
		Version: written.PartitionVersion,
	}, nil
}

// wakeRateParked wakes the parked partitions a rate write concerns (one
// scope, or every one when key is nil) that hold queued work, and tells
// listening Workers when it woke any.
func (c *store) wakeRateParked(ctx context.Context, q *dbgen.Queries, key *string) error {
	woken, err := q.WakeRateParkedPartitions(ctx, key)
	if err != nil {
		return fmt.Errorf("docket: waking parked partitions: %w", err)
	}
	if woken > 0 {
		c.announceDue(ctx, q, time.Time{})
	}
	return nil
}

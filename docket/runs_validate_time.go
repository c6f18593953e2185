package docket

import "time"

// The range of PostgreSQL's timestamptz: from 4714-11-24 00:00:00 UTC BC
// (4713 BC in the Julian calendar, Julian day 0) up to, not including,
// 294277-01-01 00:00:00 UTC. Go numbers years astronomically, so 4714 BC is
// year -4713. pgx sends a time.Time truncated to the microsecond, rounding
// towards the past in both its binary and its text encoding, so exactly the
// times in [minStorableTime, endStorableTime) arrive inside the range: the
// latest one, 294276-12-31 23:59:59.999999999, arrives as
// 23:59:59.999999. Its binary encoding counts microseconds since 2000 in an
// int64 that wraps around past about 292,000 years from 2000, and the int64
// extremes mean infinity: inside the range the count is exact and never
// reaches them, so every time the encoding would send wrapped or as
// infinity lies outside the range and is refused too.
var (
	minStorableTime = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC)
	endStorableTime = time.Date(294277, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// requireStorableTime refuses, before any database access, a time that
// PostgreSQL's timestamptz cannot hold, which would otherwise fail in the
// database with an untyped "timestamp out of range" error (or, past the
// int64 range of pgx's encoding, arrive as some other time).
func requireStorableTime(field string, t time.Time) error {
	if t.Before(minStorableTime) || !t.Before(endStorableTime) {
		return invalidArgument("%s %s is outside the range PostgreSQL's timestamptz holds (4714-11-24 BC to 294276-12-31 AD, UTC)",
			field, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

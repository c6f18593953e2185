package input

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The edges of PostgreSQL's timestamptz in Go: the earliest time it holds
// (4714-11-24 BC, which Go numbers year -4713) and the first time past its
// end.
var (
	minTime = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC)
	endTime = time.Date(294277, time.January, 1, 0, 0, 0, 0, time.UTC)
	y2K     = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// microsAfterY2K is the time us microseconds after 2000-01-01 UTC, for
// microsecond counts beyond what a time.Duration spans.
func microsAfterY2K(us uint64) time.Time {
	return time.Unix(y2K.Unix()+int64(us/1_000_000), int64(us%1_000_000)*1000).UTC()
}

// badTimes are times PostgreSQL's timestamptz cannot hold.
var badTimes = []struct {
	name string
	at   time.Time
}{
	{"year 300000", time.Date(300000, time.January, 1, 0, 0, 0, 0, time.UTC)},
	{"first instant past the range", endTime},
	{"last nanosecond before the range", minTime.Add(-time.Nanosecond)},
	{"year -300000", time.Date(-300000, time.January, 1, 0, 0, 0, 0, time.UTC)},
	// pgx sends microseconds since 2000 as an int64 that would read as
	// infinity, and one that wraps around to 2000-01-02.
	{"the microsecond pgx sends as infinity", microsAfterY2K(math.MaxInt64)},
	{"a time whose microseconds wrap to 2000-01-02", microsAfterY2K(math.MaxUint64).Add(24*time.Hour + time.Microsecond)},
	{"Go's latest time", time.Unix(math.MaxInt64-62135596801, 999999999)},
	{"in a non-UTC zone past the range", endTime.In(time.FixedZone("east", 14*3600))},
}

// timeCases refuses every bad time in every public argument that takes
// a time, before any statement (MutateRun after its lock, in its rolled-back
// transaction).
func timeCases() []inputCase {
	var cases []inputCase
	local := func(name, mentions string, call func(ctx context.Context, env *inputEnv) error) {
		cases = append(cases, inputCase{name: name, want: []error{docket.ErrInvalidArgument}, local: true, mentions: mentions, call: call})
	}
	for _, b := range badTimes {
		run := newRun("fresh-run")
		run.WakeAt = b.at
		local("InsertRun WakeAt "+b.name, "WakeAt", func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.InsertRun(ctx, run)
			return err
		})
		local("InsertRunTx WakeAt "+b.name, "WakeAt", func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.InsertRunTx(ctx, env.begin(ctx, pgx.TxOptions{}), run)
			return err
		})
		local("InsertRuns with one WakeAt "+b.name, "WakeAt", func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.InsertRuns(ctx, []docket.NewRun{newRun("fresh-1"), run})
			return err
		})
		for _, entry := range claimEntries {
			req := goodClaim()
			req.Now = b.at
			local(entry.name+" Now "+b.name, "claim Now", func(ctx context.Context, env *inputEnv) error {
				return entry.call(ctx, env, req)
			})
		}
		local("Commit ReleaseAt "+b.name, "ReleaseAt", func(ctx context.Context, env *inputEnv) error {
			req := goodCommit(env)
			req.Disposition = docket.ReleaseAt(b.at)
			_, err := env.client.Commit(ctx, req)
			return err
		})
		local("AbandonClaim RetryAt "+b.name, "RetryAt", func(ctx context.Context, env *inputEnv) error {
			req := goodAbandon(env)
			req.RetryAt = b.at
			_, err := env.client.AbandonClaim(ctx, req)
			return err
		})
		local("ListRuns cursor StartedAt "+b.name, "cursor StartedAt", func(ctx context.Context, env *inputEnv) error {
			_, err := env.client.ListRuns(ctx, docket.ListRunsRequest{Scope: acme, After: &docket.RunCursor{StartedAt: b.at, RunID: "r"}})
			return err
		})
		cases = append(cases, inputCase{name: "MutateRun WakeAt " + b.name, want: []error{docket.ErrInvalidArgument}, mentions: "mutation WakeAt",
			call: func(ctx context.Context, env *inputEnv) error {
				res, err := env.client.MutateRun(ctx, acme, runWaiting, decide(docket.Mutation{Status: docket.StatusRunning, WakeAt: b.at}))
				if res.Changed {
					env.t.Fatalf("MutateRun reports a change")
				}
				return err
			}})
	}
	// A valid Now whose orphan cutoff falls before the range.
	for _, entry := range claimEntries {
		req := goodClaim()
		req.Now, req.ClaimTTL = minTime.Add(time.Hour), 2*time.Hour
		local(entry.name+" Now minus ClaimTTL before the range", "claim Now minus ClaimTTL", func(ctx context.Context, env *inputEnv) error {
			return entry.call(ctx, env, req)
		})
	}
	return cases
}

// TestTimeRangeEdges stores the two extreme times the validation
// lets through and reads back what PostgreSQL kept: the edges Docket checks
// are the edges of the server's range, and pgx truncates the last
// nanoseconds of the range to its last microsecond instead of rounding out
// of it.
func TestTimeRangeEdges(t *testing.T) {
	t.Parallel()
	env := newHardInputEnv(t)
	ctx := testkit.Context(t)
	edges := []struct {
		runID      string
		wake, want time.Time
	}{
		{"earliest", minTime, minTime},
		{"latest", endTime.Add(-time.Nanosecond), endTime.Add(-time.Microsecond)},
	}
	for _, e := range edges {
		run := newRun(e.runID)
		run.WakeAt = e.wake
		inserted, err := env.client.InsertRun(ctx, run)
		if err != nil {
			t.Fatalf("insert %s at %s: %v", e.runID, e.wake.Format(time.RFC3339Nano), err)
		}
		if inserted.WakeAt == nil || !inserted.WakeAt.Equal(e.want) {
			t.Errorf("%s: returned wake_at %v, want %s", e.runID, inserted.WakeAt, e.want.Format(time.RFC3339Nano))
		}
	}
	var earliest, latest string
	err := env.super.QueryRow(ctx, `select
		(select to_char(wake_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC') from docket_runs where run_id = 'earliest'),
		(select to_char(wake_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US BC') from docket_runs where run_id = 'latest')`).Scan(&earliest, &latest)
	if err != nil {
		t.Fatalf("read edges: %v", err)
	}
	if earliest != "4714-11-24 00:00:00.000000 BC" || latest != "294276-12-31 23:59:59.999999 AD" {
		t.Fatalf("stored edges %q and %q, want 4714-11-24 00:00:00.000000 BC and 294276-12-31 23:59:59.999999 AD", earliest, latest)
	}
	// One microsecond past either edge is the server's out-of-range error:
	// the range checked in Go is not narrower than the server's.
	for _, lit := range []string{"4714-11-23 23:59:59.999999+00 BC", "294277-01-01 00:00:00+00"} {
		_, err := env.super.Exec(ctx, `select $1::text::timestamptz`, lit)
		if code := testkit.GuardSQLState(err); code != "22008" {
			t.Errorf("%s: SQLSTATE %q (%v), want 22008", lit, code, err)
		}
	}
}

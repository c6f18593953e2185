package lifecycle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// periodicRun is a run of tenant acme due at wake with the unique key key
// in buckets of period.
func periodicRun(runID, key string, period time.Duration, wake time.Time) docket.NewRun {
	return docket.NewRun{
		RunID: runID, Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "v1",
		State: json.RawMessage(`{}`), WakeAt: wake,
		Unique: &docket.Uniqueness{Key: key, Period: period},
	}
}

// A key with a period holds in the bucket of the run's wake time, buckets
// counted from the Unix epoch in UTC: the last microsecond of a bucket and
// the first of the next are two windows, the first and last microsecond of
// one bucket are one; the same holds in a batch and before the epoch.
func TestUniqueRunPeriodBuckets(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	ctx := testkit.Context(t)
	day := 24 * time.Hour
	// A later year, so every run is scheduled; in the zone of Tokyo, whose
	// days start at 15:00 UTC, to show buckets follow UTC.
	tokyo := time.FixedZone("JST", 9*60*60)
	dayStart := time.Date(2030, 3, 14, 0, 0, 0, 0, time.UTC)

	cases := []struct {
		runID      string
		wake       time.Time
		wantRunID  string
		wantBucket time.Time
	}{
		{"d14-first", dayStart, "d14-first", dayStart},
		{"d14-last", dayStart.Add(day - time.Microsecond), "d14-first", dayStart},
		{"d14-tokyo", time.Date(2030, 3, 14, 23, 0, 0, 0, tokyo), "d14-first", dayStart},
		{"d13-last", dayStart.Add(-time.Microsecond), "d13-last", dayStart.Add(-day)},
		{"d15-first", dayStart.Add(day), "d15-first", dayStart.Add(day)},
		{"d15-tokyo", time.Date(2030, 3, 16, 8, 59, 59, 999999000, tokyo), "d15-first", dayStart.Add(day)},
	}
	for _, c := range cases {
		got, err := s.Client.InsertRun(ctx, periodicRun(c.runID, "report", day, c.wake))
		if c.wantRunID == c.runID && err != nil || c.wantRunID != c.runID && !errors.Is(err, docket.ErrUniqueRunExists) {
			t.Fatalf("%s: insert error %v", c.runID, err)
		}
		if got.RunID != c.wantRunID || got.UniqueBucket == nil || !got.UniqueBucket.Equal(c.wantBucket) {
			t.Fatalf("%s: run %q in bucket %v, want %q in bucket %v", c.runID, got.RunID, got.UniqueBucket, c.wantRunID, c.wantBucket)
		}
	}
	if n := testkit.QueryInt64(t, s.Pool, `select count(*) from docket_runs where unique_key = 'report'`); n != 3 {
		t.Fatalf("%d runs hold report, want 3 (one a day)", n)
	}

	// A batch with a period shorter than a second, across a bucket
	// boundary, and before the epoch (buckets still start at multiples of
	// the period counted from it).
	tick := 250 * time.Millisecond
	boundary := time.Date(2030, 3, 14, 12, 0, 1, 0, time.UTC)
	beforeEpoch := time.Date(1969, 12, 31, 23, 59, 59, 900000000, time.UTC)
	ids, err := s.Client.InsertRuns(ctx, []docket.NewRun{
		periodicRun("t-a", "tick", tick, boundary.Add(-time.Microsecond)),
		periodicRun("t-b", "tick", tick, boundary),
		periodicRun("t-c", "tick", tick, boundary.Add(tick-time.Microsecond)),
		periodicRun("t-d", "tick", tick, beforeEpoch),
		periodicRun("t-e", "tick", tick, beforeEpoch.Add(-149*time.Millisecond)),
		periodicRun("t-f", "tick", tick, beforeEpoch.Add(-150*time.Millisecond-time.Microsecond)),
	})
	var skipped *docket.UniqueRunsExistError
	if !errors.As(err, &skipped) || fmt.Sprint(skipped.Indexes) != "[2 4]" || fmt.Sprint(ids) != "[t-a t-b t-b t-d t-d t-f]" {
		t.Fatalf("batch over bucket boundaries = %v, %v", ids, err)
	}
	for runID, want := range map[string]time.Time{
		"t-a": boundary.Add(-tick),
		"t-b": boundary,
		"t-d": time.Date(1969, 12, 31, 23, 59, 59, 750000000, time.UTC),
		"t-f": time.Date(1969, 12, 31, 23, 59, 59, 500000000, time.UTC),
	} {
		run, err := s.Client.FetchRun(ctx, docket.Tenant("acme"), runID)
		if err != nil || run.UniqueBucket == nil || !run.UniqueBucket.Equal(want) {
			t.Fatalf("%s: bucket %v, %v; want %v", runID, run.UniqueBucket, err, want)
		}
	}

	// Without WakeAt the bucket is the one of the insert time, the
	// database clock of the insert.
	now, err := s.Client.InsertRun(ctx, periodicRun("now-1", "now", time.Hour, time.Time{}))
	if err != nil {
		t.Fatal(err)
	}
	if want := now.InsertedAt.UTC().Truncate(time.Hour); now.UniqueBucket == nil || !now.UniqueBucket.Equal(want) {
		t.Fatalf("bucket of a run due now = %v, want the hour of its insert %v", now.UniqueBucket, want)
	}
	if got, err := s.Client.InsertRun(ctx, periodicRun("now-2", "now", time.Hour, now.InsertedAt)); !errors.Is(err, docket.ErrUniqueRunExists) || got.RunID != "now-1" {
		t.Fatalf("a run due at the first one's insert time = %q, %v; want now-1 with ErrUniqueRunExists", got.RunID, err)
	}
}

// A uniqueness the facade refuses is ErrInvalidArgument, alone and in a
// batch, and writes nothing.
func TestUniqueRunRejectsBadInput(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	cases := []struct {
		name   string
		unique docket.Uniqueness
	}{
		{"negative period", docket.Uniqueness{Key: "k", Period: -time.Hour}},
		{"period below a microsecond", docket.Uniqueness{Key: "k", Period: time.Nanosecond}},
		{"period not a whole number of microseconds", docket.Uniqueness{Key: "k", Period: time.Second + time.Nanosecond}},
		{"statuses without running", docket.Uniqueness{Key: "k", Statuses: []docket.RunStatus{docket.StatusWaiting}}},
		{"an unknown status", docket.Uniqueness{Key: "k", Statuses: []docket.RunStatus{docket.StatusRunning, "paused"}}},
		{"blank key", docket.Uniqueness{Key: "  "}},
		{"key over the limit", docket.Uniqueness{Key: strings.Repeat("k", docket.MaxIdentifierBytes+1)}},
		{"key with a control character", docket.Uniqueness{Key: "k\n"}},
	}
	counts := s.TableCounts()
	for _, c := range cases {
		run := docket.NewRun{Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`), Unique: &c.unique}
		_, err := s.Client.InsertRun(testkit.Context(t), run)
		testkit.ExpectErrorIs(t, c.name, err, docket.ErrInvalidArgument)
		_, err = s.Client.InsertRuns(testkit.Context(t), []docket.NewRun{run})
		testkit.ExpectErrorIs(t, c.name+" in a batch", err, docket.ErrInvalidArgument)
		if got := s.TableCounts(); got != counts {
			t.Fatalf("%s wrote rows: counts %v, want %v", c.name, got, counts)
		}
	}
}

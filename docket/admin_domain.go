package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// DomainOverview is one operator's view of a fairness domain: its policy,
// cursor and ring sizes, its runs by status and its recent activity. The
// parts are read one after another, not as one snapshot.
type DomainOverview struct {
	// Policy is the singleton claim policy.
	Policy ClaimPolicyDefault
	// Cursor is the ring position the last committed TenantFair call visited
	// last (0 before any visit); the next call starts after it.
	Cursor int64
	// Partitions counts every partition, each with its ring position.
	Partitions int64
	// RingSize counts the positions that own unfinished work.
	RingSize int64
	// Parked counts parked partitions.
	Parked int64
	// RunsByStatus counts the runs of each status present.
	RunsByStatus map[RunStatus]int64
	// RunsByPhase counts the runs of each phase present, at the database
	// clock of the same read as RunsByStatus.
	RunsByPhase map[RunPhase]int64
	// Activity holds one entry per minute of the last 15, oldest first, the
	// current minute last.
	Activity []MinuteActivity
}

// MinuteActivity counts what docket_runs still records of one minute: it
// keeps only each run's latest times, so earlier claims of a run are gone.
type MinuteActivity struct {
	// Minute is the start of the minute.
	Minute time.Time
	// Claimed counts claims still held that were taken in the minute.
	Claimed int64
	// Finished counts runs that finished in the minute.
	Finished int64
	// Updated counts runs whose latest write fell in the minute.
	Updated int64
}

// DomainOverview reads the domain's policy, cursor, ring and parked sizes,
// runs by status and by phase and the last 15 minutes of activity. The
// counts (one statement for both) and the activity each scan docket_runs
// once: operator tooling, not a hot path.
func (c *store) DomainOverview(ctx context.Context) (DomainOverview, error) {
	return timed(ctx, c.telemetry, opDomainOverview, func() (DomainOverview, error) {
		policyRow, err := c.queries.GetClaimPolicy(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading claim policy: %w", err)
		}
		summary, err := c.queries.ConsoleDomainSummary(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading domain summary: %w", err)
		}
		counts, err := c.queries.ConsoleRunPhaseCounts(ctx, dbgen.ConsoleRunPhaseCountsParams{})
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: counting runs by status and phase: %w", err)
		}
		activity, err := c.queries.ConsoleActivity(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading activity: %w", err)
		}
		out := DomainOverview{
			Policy:       claimPolicyDefaultOf(policyRow),
			Cursor:       summary.ScanRingPosition,
			Partitions:   summary.Partitions,
			RingSize:     summary.RingSize,
			Parked:       summary.Parked,
			RunsByStatus: map[RunStatus]int64{},
			RunsByPhase:  map[RunPhase]int64{},
			Activity:     make([]MinuteActivity, len(activity)),
		}
		for _, n := range counts {
			out.RunsByStatus[RunStatus(n.Status)] += n.Runs
			out.RunsByPhase[RunPhase(n.Phase)] += n.Runs
		}
		for i, m := range activity {
			out.Activity[i] = MinuteActivity{Minute: m.Minute, Claimed: m.Claimed, Finished: m.Finished, Updated: m.Updated}
		}
		return out, nil
	})
}

package docket

import (
	"context"
	"fmt"
	"math"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// RingState says what a TenantFair visit would find at a ring position.
type RingState string

const (
	// RingEligible has work a visit can claim: admitted-ready runs, or queued
	// runs under the cap.
	RingEligible RingState = "eligible"
	// RingCapped has queued runs but its admitted runs reach the cap.
	RingCapped RingState = "capped"
	// RingDormant has unfinished runs but nothing due to claim (timers,
	// waiting, poisoned or claimed runs).
	RingDormant RingState = "dormant"
	// RingParked is a parked partition, which parked-mode calls skip.
	RingParked RingState = "parked"
	// RingEmpty has no unfinished run; it keeps its position but is outside
	// the ring proper.
	RingEmpty RingState = "empty"
)

// RingSlot is one ring position.
type RingSlot struct {
	// Position is the immutable ring position.
	Position int64
	// Scope owns the position.
	Scope Scope
	// Unfinished counts the scope's running and waiting runs.
	Unfinished int64
	// State is what a visit would find.
	State RingState
}

// RingWindowRequest selects a window of consecutive ring positions.
type RingWindowRequest struct {
	// From is the first position of the window; 0 centres the window on
	// the cursor (see RingWindow).
	From int64
	// Limit is the window size: 0 means 50, at most MaxListLimit.
	Limit int
}

// RingWindow is one window of the ring, in position order (a window
// centred on the cursor may wrap from the ring's last position to its
// first), with the domain's ring counts as DomainOverview reads them.
type RingWindow struct {
	// Cursor is the position the last committed TenantFair call visited
	// last; the next call starts at the first position after it.
	Cursor int64
	// RingSize counts the positions that own unfinished work, parked ones
	// included: DomainOverview.RingSize.
	RingSize int64
	// Partitions counts every position, empty ones included:
	// DomainOverview.Partitions.
	Partitions int64
	// Parked counts parked partitions: DomainOverview.Parked.
	Parked int64
	// Slots are the window's positions.
	Slots []RingSlot
	// Prev is the first position of the window before this one; 0 when this
	// window starts the ring or holds all of it.
	Prev int64
	// Next is the first position after this window; 0 when it ends the ring
	// or holds all of it.
	Next int64
}

// defaultRingWindow is the window size of a zero RingWindowRequest.Limit.
const defaultRingWindow = 50

// RingWindow returns a window of ring positions (every partition's, empty
// ones included) with the state a visit would find at each, walked on the
// positions' unique index, so its cost does not grow with the ring. With
// From set it starts there and runs forward. With From 0 it is centred on
// the cursor, as the ring is a circle: (n-1)/2 positions at or before the
// cursor's place come first, continued from the ring's last position when
// fewer lie before the cursor, then the cursor's, then those after it,
// continued from the ring's first position, where n is the window size or
// the number of positions when the ring is smaller (each position appears
// once). A negative From or a bad limit fails with ErrInvalidArgument.
func (c *store) RingWindow(ctx context.Context, req RingWindowRequest) (RingWindow, error) {
	return timed(ctx, c.telemetry, opRingWindow, func() (RingWindow, error) {
		limit := req.Limit
		switch {
		case limit == 0:
			limit = defaultRingWindow
		case limit < 0 || limit > MaxListLimit:
			return RingWindow{}, invalidArgument("ring window %d is outside 1..%d", req.Limit, MaxListLimit)
		}
		if req.From < 0 {
			return RingWindow{}, invalidArgument("ring position %d is negative", req.From)
		}
		summary, err := c.queries.ConsoleDomainSummary(ctx)
		if err != nil {
			return RingWindow{}, fmt.Errorf("docket: ring window: %w", err)
		}
		out := RingWindow{Cursor: summary.ScanRingPosition, RingSize: summary.RingSize, Partitions: summary.Partitions, Parked: summary.Parked}
		if req.From == 0 {
			return c.centredRingWindow(ctx, out, limit)
		}
		if out.Slots, out.Next, err = c.ringSegment(ctx, req.From, limit); err != nil {
			return RingWindow{}, err
		}
		if len(out.Slots) > 0 && out.Slots[0].Position > 1 {
			if out.Prev, err = c.ringStart(ctx, out.Slots[0].Position-1, limit); err != nil {
				return RingWindow{}, err
			}
		}
		return out, nil
	})
}

// centredRingWindow fills out with the window of size limit centred on
// out.Cursor (see RingWindow).
func (c *store) centredRingWindow(ctx context.Context, out RingWindow, limit int) (RingWindow, error) {
	n := int(min(int64(limit), out.Partitions))
	if n == 0 {
		return out, nil
	}
	whole := int64(n) == out.Partitions
	// The positions at or before the cursor's place that the window holds,
	// its own included.
	want := (n-1)/2 + 1
	before, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: out.Cursor, WindowSize: int32(want)})
	if err != nil {
		return RingWindow{}, fmt.Errorf("docket: ring window start: %w", err)
	}
	from := before.RingPosition
	if missing := want - int(before.Positions); missing > 0 {
		// Too few positions lie before the cursor: the window starts on the
		// ring's last positions, which precede the first on the circle.
		tail, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: math.MaxInt64, WindowSize: int32(missing)})
		if err != nil {
			return RingWindow{}, fmt.Errorf("docket: ring window start: %w", err)
		}
		if out.Slots, _, err = c.ringSegment(ctx, tail.RingPosition, missing); err != nil {
			return RingWindow{}, err
		}
		from = 1
	}
	rest, next, err := c.ringSegment(ctx, max(from, 1), n-len(out.Slots))
	if err != nil {
		return RingWindow{}, err
	}
	out.Slots, out.Next = append(out.Slots, rest...), next
	if missing := n - len(out.Slots); missing > 0 && from > 1 {
		// The window ran past the ring's last position: it continues from
		// the first, up to where it started.
		wrapped, next, err := c.ringSegment(ctx, 1, missing)
		if err != nil {
			return RingWindow{}, err
		}
		out.Slots, out.Next = append(out.Slots, wrapped...), next
	}
	// Partitions created since the summary was read may repeat a position
	// the window already holds.
	seen := make(map[int64]bool, len(out.Slots))
	kept := out.Slots[:0]
	for _, s := range out.Slots {
		if !seen[s.Position] {
			seen[s.Position] = true
			kept = append(kept, s)
		}
	}
	out.Slots = kept
	if whole {
		out.Next = 0
		return out, nil
	}
	if first := out.Slots[0].Position; first > 1 {
		if out.Prev, err = c.ringStart(ctx, first-1, limit); err != nil {
			return RingWindow{}, err
		}
	}
	return out, nil
}

// ringSegment returns up to limit positions from from on and the first
// position after them (0 when the ring ends there).
func (c *store) ringSegment(ctx context.Context, from int64, limit int) ([]RingSlot, int64, error) {
	rows, err := c.queries.ConsoleRingWindow(ctx, dbgen.ConsoleRingWindowParams{FromPosition: from, PageLimit: int32(limit + 1)})
	if err != nil {
		return nil, 0, fmt.Errorf("docket: ring window: %w", err)
	}
	var next int64
	if len(rows) > limit {
		next = ringPosition(rows[limit])
		rows = rows[:limit]
	}
	slots := make([]RingSlot, len(rows))
	for i, r := range rows {
		slots[i] = RingSlot{Position: ringPosition(r), Scope: scopeOfKey(r.ScopeKey), Unfinished: r.UnfinishedCount, State: ringStateOf(r)}
	}
	return slots, next, nil
}

// ringStart returns the first of up to size positions at or before at; 1
// when there is none, which starts at the ring's beginning.
func (c *store) ringStart(ctx context.Context, at int64, size int) (int64, error) {
	start, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: at, WindowSize: int32(size)})
	if err != nil {
		return 0, fmt.Errorf("docket: ring window start: %w", err)
	}
	return max(start.RingPosition, 1), nil
}

// ringPosition reads the position column, which is never null.
func ringPosition(r dbgen.ConsoleRingWindowRow) int64 {
	if r.RingPosition == nil {
		return 0
	}
	return *r.RingPosition
}

// ringStateOf classifies one position as a visit would see it.
func ringStateOf(r dbgen.ConsoleRingWindowRow) RingState {
	underCap := r.EffectiveMaxActive == nil || r.Admitted < int64(*r.EffectiveMaxActive)
	switch {
	case r.UnfinishedCount == 0:
		return RingEmpty
	case r.Parked:
		return RingParked
	case r.HasAdmittedReady || (r.HasQueued && underCap):
		return RingEligible
	case r.HasQueued:
		return RingCapped
	default:
		return RingDormant
	}
}

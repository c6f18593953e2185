package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/gen"
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
	// From is the first position of the window; 0 places the cursor in the
	// window's middle.
	From int64
	// Limit is the window size: 0 means 50, at most MaxListLimit.
	Limit int
}

// RingWindow is one window of the ring, in position order.
type RingWindow struct {
	// Cursor is the position the last committed TenantFair call visited
	// last; the next call starts at the first position after it.
	Cursor int64
	// Slots are the window's positions.
	Slots []RingSlot
	// Prev is the first position of the window before this one; 0 when this
	// window starts the ring.
	Prev int64
	// Next is the first position after this window; 0 when it ends the ring.
	Next int64
}

// defaultRingWindow is the window size of a zero RingWindowRequest.Limit.
const defaultRingWindow = 50

// RingWindow returns a window of ring positions (every partition's, empty
// ones included) with the state a visit would find at each, walked on the
// positions' unique index, so its cost does not grow with the ring. A
// negative From or a bad limit fails with ErrInvalidArgument.
func (c *store) RingWindow(ctx context.Context, req RingWindowRequest) (_ RingWindow, err error) {
	defer c.telemetry.storeCall(opRingWindow).end(ctx, &err)
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
	out := RingWindow{Cursor: summary.ScanRingPosition}
	from := req.From
	if from == 0 {
		if from, err = c.ringStart(ctx, out.Cursor, max(limit/2, 1)); err != nil {
			return RingWindow{}, err
		}
	}
	rows, err := c.queries.ConsoleRingWindow(ctx, gen.ConsoleRingWindowParams{FromPosition: from, PageLimit: int32(limit + 1)})
	if err != nil {
		return RingWindow{}, fmt.Errorf("docket: ring window: %w", err)
	}
	if len(rows) > limit {
		out.Next = ringPosition(rows[limit])
		rows = rows[:limit]
	}
	out.Slots = make([]RingSlot, len(rows))
	for i, r := range rows {
		out.Slots[i] = RingSlot{Position: ringPosition(r), Scope: scopeOfKey(r.ScopeKey), Unfinished: r.UnfinishedCount, State: ringStateOf(r)}
	}
	if len(rows) > 0 && out.Slots[0].Position > 1 {
		if out.Prev, err = c.ringStart(ctx, out.Slots[0].Position-1, limit); err != nil {
			return RingWindow{}, err
		}
	}
	return out, nil
}

// ringStart returns the first of up to size positions at or before at; 1
// when there is none, which starts at the ring's beginning.
func (c *store) ringStart(ctx context.Context, at int64, size int) (int64, error) {
	start, err := c.queries.ConsoleRingStart(ctx, gen.ConsoleRingStartParams{AtOrBefore: at, WindowSize: int32(size)})
	if err != nil {
		return 0, fmt.Errorf("docket: ring window start: %w", err)
	}
	return max(start, 1), nil
}

// ringPosition reads the position column, which is never null.
func ringPosition(r gen.ConsoleRingWindowRow) int64 {
	if r.RingPosition == nil {
		return 0
	}
	return *r.RingPosition
}

// ringStateOf classifies one position as a visit would see it.
func ringStateOf(r gen.ConsoleRingWindowRow) RingState {
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

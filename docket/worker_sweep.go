package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/policy"
)

// ringSizeTTL is how long a ring size read at the start of one sweep serves
// the sweeps that start after it: the size moves only as tenants gain or
// lose their last unfinished run, and a stale size changes no more than
// where a sweep stops.
const ringSizeTTL = time.Second

// ringSweep follows the Worker's claim calls through one revolution of the
// TenantFair ring. A TenantFair call that comes back unfilled has spent its
// S inspections, so on a ring of H > S positions it has not looked at most
// partitions: the Worker claims again at once until ceil(H / S) unfilled
// calls in a row make one revolution, and only then waits. Any wake (the
// poll interval, a notification, a freed slot, a written verdict) starts a
// new sweep, so an idle domain costs one revolution per poll interval, and
// a ring of at most S positions, a revolution of one call, makes no call
// more than without sweeps. Legacy has no ring: its unfilled call has seen
// every due run, so it never sweeps.
type ringSweep struct {
	// tenantFair says whether the engine walks a ring.
	tenantFair bool
	// unfilled counts the unfilled calls of the current sweep; zero between
	// sweeps.
	unfilled int
	// positions is the ring size last read, at readAt.
	positions int
	readAt    time.Time
}

// newRingSweep returns the sweep state of w's claim loop.
func (w *Worker) newRingSweep() *ringSweep {
	return &ringSweep{tenantFair: w.client.engine.tenantFair}
}

// continuing reports whether the next call continues a sweep.
func (s *ringSweep) continuing() bool { return s.unfilled > 0 }

// reset ends the current sweep: the next call starts a new one.
func (s *ringSweep) reset() { s.unfilled = 0 }

// revolution is how many unfilled calls make one revolution of the ring
// last read: ceil(positions / S), at least one.
func (s *ringSweep) revolution() int {
	return max(1, (s.positions+policy.InspectionsPerCall-1)/policy.InspectionsPerCall)
}

// unfilledCall notes a call that came back unfilled and reports whether the
// Worker should claim again at once. The first unfilled call of a sweep
// reads the ring size unless a read of the last ringSizeTTL serves; a read
// that fails ends the sweep there, as if the ring were at most S positions.
// The sweep's end is logged at debug level with its call count and the ring
// size, both counts.
func (w *Worker) unfilledCall(ctx context.Context, s *ringSweep) bool {
	if !s.tenantFair {
		return false
	}
	s.unfilled++
	if s.unfilled == 1 && time.Since(s.readAt) >= ringSizeTTL {
		if err := w.readRingSize(ctx, s); err != nil {
			w.logger.WarnContext(ctx, "docket worker could not read the ring size; claiming again at the next wake", "error", err.Error())
			s.reset()
			return false
		}
	}
	if s.unfilled < s.revolution() {
		return true
	}
	w.logger.DebugContext(ctx, "docket worker swept the ring", "calls", s.unfilled, "ring_positions", s.positions)
	s.reset()
	return false
}

// readRingSize reads the ring size into s.
func (w *Worker) readRingSize(ctx context.Context, s *ringSweep) error {
	ctx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	positions, err := w.client.queries.RingPositions(ctx)
	if err != nil {
		return fmt.Errorf("docket: read the ring size: %w", err)
	}
	s.positions, s.readAt = int(positions), time.Now()
	return nil
}

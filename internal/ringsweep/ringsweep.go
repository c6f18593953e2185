// Package ringsweep follows a Worker's claim calls through one revolution
// of the TenantFair ring. A TenantFair call that comes back unfilled has
// spent its S inspections, so on a ring of H > S positions it has not
// looked at most partitions: the Worker claims again at once until
// ceil(H / S) unfilled calls in a row make one revolution, and only then
// waits. Any wake (the poll interval, a notification, a freed slot, a
// written verdict) starts a new sweep, so an idle domain costs one
// revolution per poll interval, and a ring of at most S positions, a
// revolution of one call, makes no call more than without sweeps. Legacy
// has no ring: its unfilled call has seen every due run, so it never
// sweeps.
package ringsweep

import (
	"context"
	"time"
)

// SizeTTL is how long a ring size read at the start of one sweep serves
// the sweeps that start after it: the size moves only as tenants gain or
// lose their last unfinished run, and a stale size changes no more than
// where a sweep stops.
const SizeTTL = time.Second

// Sweep is the sweep state of one claim loop; only that loop uses it.
type Sweep struct {
	// walks says whether the engine walks a ring.
	walks bool
	// perCall is S, the inspections of one call.
	perCall int
	// size reads the ring's positions.
	size func(ctx context.Context) (int, error)
	// now is the clock SizeTTL is measured on.
	now func() time.Time
	// unfilled counts the unfilled calls of the current sweep; zero between
	// sweeps.
	unfilled int
	// positions is the ring size last read, at readAt.
	positions int
	readAt    time.Time
}

// New returns the sweep state of a claim loop whose engine walks a ring
// (walks) of calls of perCall inspections, reading the ring's size with
// size.
func New(walks bool, perCall int, size func(ctx context.Context) (int, error)) *Sweep {
	return &Sweep{walks: walks, perCall: perCall, size: size, now: time.Now}
}

// Continuing reports whether the next call continues a sweep.
func (s *Sweep) Continuing() bool { return s.unfilled > 0 }

// Reset ends the current sweep: the next call starts a new one.
func (s *Sweep) Reset() { s.unfilled = 0 }

// revolution is how many unfilled calls make one revolution of the ring
// last read: ceil(positions / S), at least one.
func (s *Sweep) revolution() int {
	return max(1, (s.positions+s.perCall-1)/s.perCall)
}

// Step is what Unfilled decided.
type Step struct {
	// Again says the loop should claim again at once.
	Again bool
	// Swept says a revolution ended with this call, after Calls unfilled
	// calls over a ring of Positions.
	Swept            bool
	Calls, Positions int
	// Err is a failed read of the ring size, which ended the sweep as if
	// the ring were at most S positions.
	Err error
}

// Unfilled notes a call that came back unfilled and says whether the loop
// should claim again at once. The first unfilled call of a sweep reads the
// ring size unless a read of the last SizeTTL serves.
func (s *Sweep) Unfilled(ctx context.Context) Step {
	if !s.walks {
		return Step{}
	}
	s.unfilled++
	if s.unfilled == 1 && s.now().Sub(s.readAt) >= SizeTTL {
		positions, err := s.size(ctx)
		if err != nil {
			s.Reset()
			return Step{Err: err}
		}
		s.positions, s.readAt = positions, s.now()
	}
	if s.unfilled < s.revolution() {
		return Step{Again: true}
	}
	step := Step{Swept: true, Calls: s.unfilled, Positions: s.positions}
	s.Reset()
	return step
}

package oracle

import (
	"fmt"
	"time"
)

// Model is a deterministic in-memory reference of one fairness domain: runs,
// partitions with their immutable ring positions and unfinished counts, the
// durable cursor and the default cap. Its only lock contention is the run
// rows another transaction holds (HoldRowLock), so a TenantFair visit never
// yields partition_lock_skip or stale.
// Claim tokens are deterministic ("token-1", "token-2", ...). A Model is not
// safe for concurrent use; calls are serialized like the policy row lock.
type Model struct {
	budgets    Budgets
	defaultCap int
	// defaultRate is the domain's default rate; zero is none.
	defaultRate Rate
	// domainPaused is the queue-wide pause (PauseDomain).
	domainPaused bool
	park         bool // park_dormant
	cursor       int64
	nextID       int64
	nextPos      int64
	nextToken    int64
	runs         []*Run // ascending internal id
	byRunID      map[string]*Run
	parts        map[string]*Partition
	order        []*Partition   // ascending ring position
	rowLocks     map[int64]bool // internal ids of runs another transaction holds
}

// NewModel returns an empty TenantFair domain with the production budgets
// and the given default cap (1..MaxCap).
func NewModel(defaultCap int) (*Model, error) {
	return NewModelWithBudgets(defaultCap, DefaultBudgets())
}

// NewModelWithBudgets is NewModel with explicit budgets (each >= 1).
func NewModelWithBudgets(defaultCap int, b Budgets) (*Model, error) {
	if err := validCap("NewModel", defaultCap); err != nil {
		return nil, err
	}
	if b.S < 1 || b.Q < 1 || b.K < 1 {
		return nil, opError("NewModel", ErrInvalidArgument, "budgets %+v must all be >= 1", b)
	}
	return &Model{
		budgets:    b,
		defaultCap: defaultCap,
		byRunID:    map[string]*Run{},
		parts:      map[string]*Partition{},
	}, nil
}

// Clone returns an independent deep copy of the model.
func (m *Model) Clone() *Model {
	c := *m
	c.runs = make([]*Run, len(m.runs))
	c.byRunID = make(map[string]*Run, len(m.runs))
	for i, r := range m.runs {
		cp := *r
		c.runs[i] = &cp
		c.byRunID[cp.RunID] = &cp
	}
	c.parts = make(map[string]*Partition, len(m.order))
	c.order = make([]*Partition, len(m.order))
	for i, p := range m.order {
		cp := *p
		c.order[i] = &cp
		c.parts[cp.Scope] = &cp
	}
	return &c
}

// Budgets returns the model's budgets.
func (m *Model) Budgets() Budgets { return m.budgets }

// DefaultCap returns the persisted default cap.
func (m *Model) DefaultCap() int { return m.defaultCap }

// DefaultRate returns the domain's default rate (zero: none).
func (m *Model) DefaultRate() Rate { return m.defaultRate }

// Cursor returns the durable scan_ring_position.
func (m *Model) Cursor() int64 { return m.cursor }

// Run returns a snapshot of the run with the given run id.
func (m *Model) Run(runID string) (Run, bool) {
	r, ok := m.byRunID[runID]
	if !ok {
		return Run{}, false
	}
	return *r, true
}

// Runs returns snapshots of all runs in internal id order.
func (m *Model) Runs() []Run {
	out := make([]Run, len(m.runs))
	for i, r := range m.runs {
		out[i] = *r
	}
	return out
}

// Partition returns a snapshot of the partition of scope.
func (m *Model) Partition(scope string) (Partition, bool) {
	p, ok := m.parts[scope]
	if !ok {
		return Partition{}, false
	}
	return *p, true
}

// Partitions returns snapshots of all partitions in ring-position order,
// including those with zero unfinished runs.
func (m *Model) Partitions() []Partition {
	out := make([]Partition, len(m.order))
	for i, p := range m.order {
		out[i] = *p
	}
	return out
}

// Ring returns the current unfinished ring: position -> scope for every
// partition with a positive unfinished count.
func (m *Model) Ring() map[int64]string {
	out := map[int64]string{}
	for _, p := range m.order {
		if p.Unfinished > 0 {
			out[p.Position] = p.Scope
		}
	}
	return out
}

// EffectiveCap returns the override of scope, else the default cap.
func (m *Model) EffectiveCap(scope string) int {
	if p, ok := m.parts[scope]; ok && p.Override > 0 {
		return p.Override
	}
	return m.defaultCap
}

// Counts returns the effective counts of scope at time now.
func (m *Model) Counts(scope string, now time.Time) ScopeCounts {
	c := ScopeCounts{Cap: m.EffectiveCap(scope)}
	for _, r := range m.runs {
		if r.Scope != scope {
			continue
		}
		if r.Status.Unfinished() {
			c.Unfinished++
		}
		if r.Claimed() {
			c.LiveClaims++
		}
		if !r.Healthy() {
			continue
		}
		due := !r.Claimed() && r.HasWake && !r.WakeAt.After(now)
		switch {
		case r.Admitted && r.Claimed():
			c.AdmittedClaimed++
		case r.Admitted && due:
			c.AdmittedReady++
		case !r.Admitted && due:
			c.Queued++
		}
		if r.Admitted {
			c.Admitted++
		}
	}
	c.Debt = max(c.Admitted-c.Cap, 0)
	return c
}

// partitionFor returns the partition of scope, creating it (and its ring
// position, the next integer from 1) on first use.
func (m *Model) partitionFor(scope string) *Partition {
	if p, ok := m.parts[scope]; ok {
		return p
	}
	m.nextPos++
	p := &Partition{Scope: scope, Position: m.nextPos}
	m.parts[scope] = p
	m.order = append(m.order, p)
	return p
}

// partitionAt returns the partition at a ring position.
func (m *Model) partitionAt(pos int64) *Partition {
	for _, p := range m.order {
		if p.Position == pos {
			return p
		}
	}
	panic(fmt.Sprintf("oracle: no partition at ring position %d", pos))
}

// admittedCount is the fresh count of running, unpoisoned, marked rows of
// scope.
func (m *Model) admittedCount(scope string) int {
	n := 0
	for _, r := range m.runs {
		if r.Scope == scope && r.Healthy() && r.Admitted {
			n++
		}
	}
	return n
}

// setStatus changes a run's status and keeps unfinished_count exact, like
// the schedule-counter trigger.
func (m *Model) setStatus(r *Run, s Status) {
	p := m.parts[r.Scope]
	if r.Status.Unfinished() {
		p.Unfinished--
	}
	if s.Unfinished() {
		p.Unfinished++
	}
	r.Status = s
}

// newToken returns the next deterministic claim token.
func (m *Model) newToken() string {
	m.nextToken++
	return fmt.Sprintf("token-%d", m.nextToken)
}

// validCap checks a cap against 1..MaxCap.
func validCap(op string, c int) error {
	if c < 1 || c > MaxCap {
		return opError(op, ErrInvalidCap, "cap %d outside 1..%d", c, MaxCap)
	}
	return nil
}

package main

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// insertBatch is the largest number of runs one insert statement carries.
const insertBatch = 5000

// book is the catalogue of one drain's runs: tenant, handler time, insert
// time and first handler start of each, indexed by run number. Handlers of
// every engine record into it, so waits are measured the same way for all.
type book struct {
	tenants  []string
	work     []time.Duration
	inserted []time.Time
	started  []atomic.Int64
	handled  atomic.Int64
	// claimed, returned and settled are, for the runs of a Docket drain,
	// when each was first claimed, when its first handler returned and
	// when its first verdict was written (Unix nanoseconds, 0 if never).
	claimed, returned, settled []atomic.Int64
	// all is closed when every run has started once.
	all     chan struct{}
	allOnce sync.Once
}

// newBook returns a book with room for n runs.
func newBook(n int) *book {
	return &book{tenants: make([]string, 0, n), work: make([]time.Duration, 0, n), all: make(chan struct{})}
}

// add registers a run of tenant whose handler works for d and returns its
// number.
func (b *book) add(tenant string, d time.Duration) int {
	b.tenants = append(b.tenants, tenant)
	b.work = append(b.work, d)
	return len(b.tenants) - 1
}

// addMany registers n runs of tenant and returns their numbers.
func (b *book) addMany(tenant string, n int, d time.Duration) []int {
	runs := make([]int, n)
	for i := range runs {
		runs[i] = b.add(tenant, d)
	}
	return runs
}

// seal fixes the number of runs; call it after the last add and before any
// handler runs.
func (b *book) seal() {
	b.inserted = make([]time.Time, len(b.tenants))
	b.started = make([]atomic.Int64, len(b.tenants))
	b.claimed = make([]atomic.Int64, len(b.tenants))
	b.returned = make([]atomic.Int64, len(b.tenants))
	b.settled = make([]atomic.Int64, len(b.tenants))
}

// size is the number of runs.
func (b *book) size() int { return len(b.tenants) }

// tenant returns the tenant of run r.
func (b *book) tenant(r int) string { return b.tenants[r] }

// markInserted records that runs were committed at t.
func (b *book) markInserted(runs []int, t time.Time) {
	for _, r := range runs {
		b.inserted[r] = t
	}
}

// begin records the handler start of run r and returns its handler time.
// Only the first start of a run counts.
func (b *book) begin(r int) time.Duration {
	if b.started[r].CompareAndSwap(0, time.Now().UnixNano()) {
		if int(b.handled.Add(1)) == len(b.tenants) {
			b.allOnce.Do(func() { close(b.all) })
		}
	}
	return b.work[r]
}

// startedAt is the first handler start of run r (zero if it never started).
func (b *book) startedAt(r int) time.Time {
	ns := b.started[r].Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// wait is run r's wait: first handler start minus the later of its insert
// and the worker's start (began), so startup is not charged to a run that
// was inserted before the worker existed.
func (b *book) wait(r int, began time.Time) time.Duration {
	from := b.inserted[r]
	if began.After(from) {
		from = began
	}
	return b.startedAt(r).Sub(from)
}

// runID is the Docket run id of run r.
func runID(r int) string { return fmt.Sprintf("r%07d", r) }

// runOf parses a Docket run id back to its number.
func runOf(id string) (int, error) {
	if len(id) < 2 || id[0] != 'r' {
		return 0, fmt.Errorf("run id %q is not the scorecard's", id)
	}
	return strconv.Atoi(id[1:])
}

// addManySpread registers n runs round-robin over tenants and returns their
// numbers.
func (b *book) addManySpread(n, tenants int, d time.Duration) []int {
	runs := make([]int, n)
	for i := range runs {
		runs[i] = b.add(tenantName(i%tenants), d)
	}
	return runs
}

// markClaimed records that run r was claimed at t, unless it was before.
func (b *book) markClaimed(r int, t time.Time) { b.claimed[r].CompareAndSwap(0, t.UnixNano()) }

// markReturned records that a handler of run r returned now, unless one did
// before.
func (b *book) markReturned(r int) { b.returned[r].CompareAndSwap(0, time.Now().UnixNano()) }

// markSettled records that a verdict on run r was written now, unless one
// was before.
func (b *book) markSettled(r int) { b.settled[r].CompareAndSwap(0, time.Now().UnixNano()) }

// holding is how runs held their tenant's admission: over the span from
// the first claim to the last verdict of the runs measured, the mean number
// admitted (claimed, verdict not yet written) and the mean number in a
// handler; what is admitted but not in a handler was held ahead of the
// handlers or waited for its verdict's write.
type holding struct {
	MeanAdmitted  float64 `json:"mean_admitted"`
	MeanInHandler float64 `json:"mean_in_handler"`
	// HeldShare is the share of the admitted time spent out of a handler.
	HeldShare float64 `json:"held_share"`
}

// holdingOf measures runs whose claim, handler and verdict were all
// recorded; ok is false when none was (an engine without admissions).
func (b *book) holdingOf(runs []int) (h holding, ok bool) {
	var admitted, inHandler, first, last int64
	for _, r := range runs {
		claimed, started, returned, settled := b.claimed[r].Load(), b.started[r].Load(), b.returned[r].Load(), b.settled[r].Load()
		if claimed == 0 || started == 0 || returned == 0 || settled == 0 {
			continue
		}
		admitted += settled - claimed
		inHandler += returned - started
		if first == 0 || claimed < first {
			first = claimed
		}
		last = max(last, settled)
	}
	if admitted <= 0 || last <= first {
		return holding{}, false
	}
	span := float64(last - first)
	return holding{MeanAdmitted: float64(admitted) / span, MeanInHandler: float64(inHandler) / span,
		HeldShare: 1 - float64(inHandler)/float64(admitted)}, true
}

package worker

import "sync"

// snapshotGate lets a handler wait until the cap sampler has taken a whole
// snapshot that began after the handler's run was leased, so every lease is
// held during at least one snapshot: the drain overlaps the sampler by
// construction instead of by simulated handler time.
type snapshotGate struct {
	mu                 sync.Mutex
	cond               *sync.Cond
	started, completed int
	// closed is set when the sampler stops; waiting handlers go on.
	closed bool
}

func newSnapshotGate() *snapshotGate {
	g := &snapshotGate{}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// begin and end bracket one snapshot of the sampler.
func (g *snapshotGate) begin() {
	g.mu.Lock()
	g.started++
	g.mu.Unlock()
}

func (g *snapshotGate) end() {
	g.mu.Lock()
	g.completed++
	g.cond.Broadcast()
	g.mu.Unlock()
}

// close releases every waiter for good.
func (g *snapshotGate) close() {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
}

// await asks the sampler for a snapshot (a pending request is enough: it
// starts a snapshot after this call) and blocks until a snapshot that began
// after the call has completed. Snapshots run one at a time, so the next
// one to begin is number started + 1.
func (g *snapshotGate) await(tick chan<- struct{}) {
	g.mu.Lock()
	want := g.started + 1
	g.mu.Unlock()
	select {
	case tick <- struct{}{}:
	default:
	}
	g.mu.Lock()
	for g.completed < want && !g.closed {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

package docket

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// errBatchFailed reports a set-based commit statement that failed as a
// whole, so none of its commits took effect; each job then commits alone,
// which reports its own error.
var errBatchFailed = errors.New("docket: worker batch commit failed")

// groupCommit folds the verdict commits of jobs that finish together into
// one CommitRuns statement. The first commit to arrive while no statement is
// in flight leads: its job writes every commit waiting at that moment, its
// own included, then hands the lead to the oldest commit that arrived
// meanwhile. So a commit waits at most for the statement ahead of it and its
// own, and no goroutine outlives the jobs.
type groupCommit struct {
	client *Client

	mu sync.Mutex
	// leading is set while some job holds the lead.
	leading bool
	// pending are the commits waiting for the next statement.
	pending []*queuedCommit
}

// queuedCommit is one job's commit waiting in the group, and its outcome.
type queuedCommit struct {
	req      CommitRequest
	scopeKey string
	// woken receives once the outcome below is set, or once when the job
	// is handed the lead.
	woken chan struct{}
	lead  bool

	seq  int64
	step int
	err  error
}

// commit writes req together with the commits of other jobs and returns the
// run's new checkpoint sequence and step. A fence miss is ErrStaleFence or
// ErrNotFound as from Commit; errBatchFailed means req was not written.
func (g *groupCommit) commit(ctx context.Context, req CommitRequest) (int64, int, error) {
	scopeKey, err := g.client.holderKey(req.Holder)
	if err != nil {
		return 0, 0, err
	}
	q := &queuedCommit{req: req, scopeKey: scopeKey, woken: make(chan struct{}, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, q)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		<-q.woken
	}
	if lead || q.lead {
		g.lead(ctx)
	}
	return q.seq, q.step, q.err
}

// lead writes every pending commit in one statement, then passes the lead
// on to the oldest commit queued meanwhile, or gives it up.
func (g *groupCommit) lead(ctx context.Context) {
	// Jobs woken together, such as the jobs of one claim call, are often
	// runnable but not yet here; one yield lets them queue first.
	runtime.Gosched()
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()

	g.client.commitBatch(ctx, batch)
	for _, q := range batch {
		q.woken <- struct{}{}
	}

	g.mu.Lock()
	var next *queuedCommit
	if len(g.pending) > 0 {
		next = g.pending[0]
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	if next != nil {
		next.lead = true
		next.woken <- struct{}{}
	}
}

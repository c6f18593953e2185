package docket

import (
	"context"
	"errors"
	"sync"
	"time"
)

// groupCommitWait bounds how long a leading commit waits for the verdicts of
// the other jobs of its claim call before it writes without them.
const groupCommitWait = 200 * time.Microsecond

// errBatchFailed reports a set-based commit statement that failed as a
// whole, so none of its commits took effect; each job then commits alone,
// which reports its own error.
var errBatchFailed = errors.New("docket: worker batch commit failed")

// groupCommit folds the verdict commits of jobs that finish together into
// one CommitRuns statement. The first commit to arrive while no statement is
// in flight leads: its job waits until the other jobs of its claim call
// committed or ended (at most groupCommitWait), writes every commit waiting
// at that moment, its own included, then hands the lead to the oldest commit
// that arrived meanwhile. So a commit waits at most for the statement ahead
// of it and its own, and no goroutine outlives the jobs.
type groupCommit struct {
	client *Client
	// changed receives a value, if none is pending, whenever a verdict
	// arrives or a job stops being awaited.
	changed chan struct{}

	// mu also guards the awaiting counts of the claim calls' reads.
	mu sync.Mutex
	// leading is set while some job holds the lead.
	leading bool
	// pending are the commits waiting for the next statement.
	pending []*queuedCommit
}

// newGroupCommit returns the group commit of client's worker.
func newGroupCommit(client *Client) *groupCommit {
	return &groupCommit{client: client, changed: make(chan struct{}, 1)}
}

// await marks j's verdict as expected: j is starting.
func (g *groupCommit) await(j *Job) {
	g.mu.Lock()
	defer g.mu.Unlock()
	j.awaited = true
	j.cohort.awaiting++
}

// settled stops awaiting j's verdict, if it still was: j ends having
// committed alone or not at all.
func (g *groupCommit) settled(j *Job) {
	g.mu.Lock()
	g.forget(j)
	g.mu.Unlock()
	g.signal()
}

// forget stops awaiting j. The caller holds g.mu.
func (g *groupCommit) forget(j *Job) {
	if j.awaited {
		j.awaited = false
		j.cohort.awaiting--
	}
}

// signal wakes a leader waiting in gather.
func (g *groupCommit) signal() { notify(g.changed) }

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
	// size is the number of commits of the statement that carried this one.
	size int
}

// commit writes req, the verdict of j, together with the commits of other
// jobs and returns the run's new checkpoint sequence and step, and the
// number of commits the statement carried. A fence miss is ErrStaleFence or
// ErrNotFound as from Commit; errBatchFailed means req was not written.
func (g *groupCommit) commit(ctx context.Context, j *Job, req CommitRequest) (int64, int, int, error) {
	scopeKey, err := g.client.holderKey(req.Holder)
	if err != nil {
		return 0, 0, 0, err
	}
	q := &queuedCommit{req: req, scopeKey: scopeKey, woken: make(chan struct{}, 1)}
	g.mu.Lock()
	g.forget(j)
	g.pending = append(g.pending, q)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	g.signal()
	if !lead {
		<-q.woken
	}
	if lead || q.lead {
		g.lead(ctx, j.cohort)
	}
	return q.seq, q.step, q.size, q.err
}

// lead writes every pending commit in one statement once gathered, then
// passes the lead on to the oldest commit queued meanwhile, or gives it up.
func (g *groupCommit) lead(ctx context.Context, cohort *leaseRead) {
	g.gather(cohort)
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

// gather waits until every job of cohort, the claim call of the leading
// job, committed or ended, or groupCommitWait passed: the jobs of one claim
// call start together and often finish together, and their verdicts then
// share one statement.
func (g *groupCommit) gather(cohort *leaseRead) {
	var timer *time.Timer
	deadline := time.Now().Add(groupCommitWait)
	g.mu.Lock()
	defer g.mu.Unlock()
	for cohort.awaiting > 0 {
		wait := time.Until(deadline)
		if wait <= 0 {
			return
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		g.mu.Unlock()
		select {
		case <-g.changed:
		case <-timer.C:
		}
		g.mu.Lock()
	}
}

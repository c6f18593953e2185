package docket

import (
	"time"

	"github.com/docketrun/docket-go/internal/groupcommit"
)

// groupCommitWait bounds how long a leading commit waits for the verdicts of
// the other jobs of its claim call before it writes without them.
const groupCommitWait = 200 * time.Microsecond

// groupCommit folds the verdict commits of jobs that finish together into
// one CommitRuns statement (see package groupcommit): the jobs of one claim
// call form a cohort, since they start together and often finish together.
// A statement that failed as a whole is groupcommit.ErrFlushFailed for each
// of its commits; each job then commits alone, which reports its own error.
type groupCommit = groupcommit.Group[batchCommit, batchCommitted]

// batchCommit is one job's verdict commit in the group.
type batchCommit struct {
	req      CommitRequest
	scopeKey string
}

// batchCommitted is the run's new checkpoint after a group commit.
type batchCommitted struct {
	seq  int64
	step int
}

// newGroupCommit returns the group commit of client's worker.
func newGroupCommit(client *Client) *groupCommit {
	return groupcommit.New(client.commitBatch, groupCommitWait, nil)
}

// Package jobcompleter writes the verdicts of a Worker's jobs that can share
// a statement. It decides which verdict is batchable (the predicate it is
// given: one that releases its claim and that the store accepts as given)
// and owns the group commit (package groupcommit) those verdicts go
// through: the jobs of one claim call form a cohort whose verdicts share
// one statement when they finish together; while verdicts arrive closer
// together than a statement takes, every verdict written within the
// statement's linger shares one; and with a fixed batch wait every verdict
// written within that wait shares one, at most MaxBatch of them.
// A verdict that is not batchable, or whose statement failed as a whole, is
// the caller's to write alone.
//
// The completer knows nothing of SQL: the flush function it is given sends
// one statement and reports one result per verdict.
package jobcompleter

// Package jobcompleter writes the verdicts of a Worker's jobs that can share
// a statement, each still fenced on its own claim. The first verdict to
// arrive while no statement is in flight leads: it waits until the other
// jobs of its claim call (its cohort, which started together and often
// finish together) wrote or settled, at most CohortWait, sends every
// verdict queued at that moment in one statement, its own included, and
// hands the lead to the oldest verdict queued meanwhile. So a verdict waits
// at most for the statement ahead of it and its own, and no goroutine of
// the completer outlives its callers.
//
// A leader may linger instead, for larger statements: with a fixed batch
// wait it waits that long for the verdicts of any job, cohorts aside,
// unless MaxBatch of them are pending or Hurry was called; otherwise it
// decides from the moving averages of a statement's time and of the gap
// between verdicts, and lingers, as long as its caller's rule says for that
// statement time, only while verdicts have been arriving closer together
// than that.
//
// The completer knows nothing of SQL or of which verdict may share a
// statement: its caller sends it only those, and the flush function it is
// given sends one statement and reports one result per verdict.
package jobcompleter

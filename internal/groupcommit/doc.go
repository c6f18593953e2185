// Package groupcommit folds the writes of concurrent callers into one
// statement per batch. The first write to arrive while no batch is in flight
// leads: it waits until the other members of its cohort (the callers that
// started together and are likely to finish together) wrote or settled, at
// most the group's wait, flushes every write queued at that moment, its own
// included, and hands the lead to the oldest write queued meanwhile. So a
// write waits at most for the batch ahead of it and its own, and no goroutine
// of the group outlives its callers.
//
// A lingering group (Linger) trades latency for larger batches: its leader
// waits the whole linger for the writes of any caller, cohorts aside, unless
// the batch fills up first or Hurry was called. An adaptive group (Adapt)
// decides for each leader, from the moving averages of a flush's time and of
// the gap between writes: it lingers, as long as its caller's rule says for
// that flush time, only while writes have been arriving closer together than
// that, and otherwise waits for its cohort.
//
// The group knows nothing of what it writes: the flush function it is given
// sends one batch and reports one result per item.
package groupcommit

// Package executor runs one claimed run end to end, as a Worker runs it:
// the heartbeat that keeps the claim, the read of the run, the handler's
// slot, the handler call under its timeout with a panic recovered as a
// failed attempt, the handler's checkpoints, and the commit of its verdict
// with the retries, the answers a refused write can have and their
// fallbacks; every write of the claim carries its fence. A stopping Worker
// takes a claim away from its job with Surrender and gives it back with
// HandBack.
//
// What it needs of the run store and of the Worker it declares as seams:
// Store writes under the claim, Work calls the handler and plans verdicts,
// Reporter turns what happened into logs, metrics, spans and events; Slots
// are the Worker's handler slots, and Plan is the commit a verdict asks
// for, with what the executor decides on. The Worker fills in a Job's
// exported fields and runs it.
// Package docket fills them in and keeps the public Job, the handler call
// and the verdicts' meaning; this package knows no SQL and no public type.
package executor

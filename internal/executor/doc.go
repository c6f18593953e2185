// Package executor is the holder side of one claimed run, as a Worker runs
// it: the fence every write of the claim carries, the heartbeat that keeps
// the claim, the handler's checkpoints, and the commit of its verdict with
// the retries, the answers a refused write can have and their fallbacks. A
// stopping Worker takes a claim away from its job with Surrender and gives
// it back with HandBack.
//
// What it needs of the run store and of the Worker it declares as seams:
// Store writes under the claim, Hooks turns what happened into logs,
// metrics, spans and events, and Plan is the commit a verdict asks for.
// Package docket fills them in and keeps the public Job, the handler call
// and the verdicts' meaning; this package knows no SQL and no public type.
package executor

package cli

// The usages of the runs actions that have their own flags.
const (
	runsListUsage = `docket runs list [--tenant TENANT | --tenantless] [--status S] [--phase P] [--graph G]
                 [--limit N] [--after CURSOR] [--json] [--database-url URL] [--schema NAME]
  One page of runs, newest first by (started_at, run_id), started_at being
  the insert time: of every scope, or of one with --tenant or --tenantless.
  --status S      only runs with status running, waiting, done, failed or cancelled
  --phase P       only runs in phase P at the database clock: queued, ready,
                  executing, retrying, scheduled, paused, waiting, poisoned,
                  done, failed or cancelled
  --graph G       only runs of graph G
  --limit N       page size, 1..1000 (default 100)
  --after CURSOR  continue after the cursor a previous page printed
  --json          one JSON object per run, then {"next": CURSOR} when more remain
  The table shows scope, graph, status, phase, the handler attempt (failed
  or retried attempts so far), step, checkpoint seq, whether a holder has
  the run claimed (never the token), wake_at, updated_at and the first line
  of the newest failed attempt's error ("-" when none; an operator's retry
  entry is no failure); a last line "next: CURSOR" tells that another page
  exists. Listing every
  scope sorts the filtered runs (no index serves that order); a scoped
  listing reads docket_runs_list_idx.
`
	runsShowUsage = `docket runs show TENANT RUN_ID [--tenantless] [--json] [--database-url URL] [--schema NAME]
  One run: status, phase, graph, step, checkpoint, claim attempts and abandons,
  the handler-attempt counter, whether a claim is held (never the token),
  poison reason, the admission state at the database clock, the unique key
  the run holds and its period bucket, the state document and the error
  history (one "error:" line per entry, oldest first, its text quoted).
  --tenantless    address the tenantless scope instead of a TENANT
  --json          one JSON object instead of "name: value" lines
  A missing run, or one of another scope, exits 1.
`
	runsCancelUsage = `docket runs cancel TENANT RUN_ID [--tenantless] [--database-url URL] [--schema NAME]
  Cancel an unfinished run (running, waiting or poisoned): any claim is
  revoked and its admission released. A finished run exits 2 and is left as
  it is; a missing run exits 1.
`
	runsResumeUsage = `docket runs resume TENANT RUN_ID [--tenantless] [--database-url URL] [--schema NAME]
  Send a waiting run back to work: running, due now, queued behind its
  tenant's cap. A run that is not waiting exits 2 and is left as it is; a
  missing run exits 1.
`
	runsRetryPoisonedUsage = `docket runs retry-poisoned TENANT RUN_ID [--tenantless] [--database-url URL] [--schema NAME]
  Revive a poisoned run: healthy running, due now, claim attempts and
  abandons reset, queued behind its tenant's cap. A run that is not poisoned
  exits 2 and is left as it is; a missing run exits 1.
`
)

// runsActionUsage maps the runs actions with their own usage to it.
var runsActionUsage = map[string]string{
	"list":           runsListUsage,
	"show":           runsShowUsage,
	"cancel":         runsCancelUsage,
	"resume":         runsResumeUsage,
	"retry-poisoned": runsRetryPoisonedUsage,
}

package cli

const schedulesUsage = `docket schedules <action> [--database-url URL] [--schema NAME]
  list                    schedules of every scope (or one), by scope and name
  add TENANT NAME         add a schedule of periodic runs
  pause TENANT NAME       stop a schedule's ticks
  resume TENANT NAME      let a paused schedule tick again, from the next tick
  remove TENANT NAME      delete a schedule; the runs it inserted stay
  TENANT                  a tenant id, or a scope as a list prints it:
                          tenant:ID or tenantless
  --tenantless            address the tenantless scope instead of a TENANT
  --expected-version V    pause, resume, remove: apply only at version V (else exit 3)
  docket schedules ACTION --help prints the flags of each action. A Worker
  with WorkerConfig.Schedules takes the ticks; these commands only edit the
  schedules. A missing schedule exits 1, an invalid one 2.
`

// The usages of the schedules actions.
const (
	schedulesListUsage = `docket schedules list [--tenant TENANT | --tenantless] [--limit N] [--after CURSOR] [--json]
                      [--database-url URL] [--schema NAME]
  One page of schedules in (scope, name) order, the tenantless scope first:
  of every scope, or of one with --tenant or --tenantless.
  --limit N       page size, 1..1000 (default 100)
  --after CURSOR  continue after the cursor a previous page printed (SCOPE/NAME)
  --json          one JSON object per schedule, then {"next": CURSOR} when more remain
  The table shows scope, name, cadence (cron expression or every D), time
  zone, missed-tick policy, paused, next tick, last tick and version; a last
  line "next: CURSOR" tells that another page exists.
`
	schedulesAddUsage = `docket schedules add TENANT NAME (--cron EXPR [--time-zone ZONE] | --every D) --graph G --graph-hash H
                     --state JSON [--missed-ticks skip|all] [--start T] [--tenantless]
                     [--database-url URL] [--schema NAME]
  Add a schedule whose ticks insert runs of graph G at version H with the
  state document JSON (required, as NewSchedule.State is: --state '{}' for
  an empty one), each with the run id schedule:TENANT/NAME@TICK
  (schedule:NAME@TICK when tenantless).
  --cron EXPR         five fields (minute hour day-of-month month day-of-week)
                      or @hourly, @daily, @weekly, @monthly, @yearly
  --time-zone ZONE    IANA zone the cron expression is read in (default UTC)
  --every D           a fixed interval of whole seconds (90s, 15m, 24h)
  --missed-ticks P    skip (default): one run for the latest missed tick;
                      all: one run per missed tick, at most 100 per take
  --start T           RFC 3339 time the ticks start from (default now): an
                      interval ticks at T + k*D, cron fires first after T
  --tenantless        add the schedule to the tenantless scope
  A name already used in its scope, or an invalid definition, exits 2.
`
	schedulesPauseUsage = `docket schedules pause TENANT NAME [--tenantless] [--expected-version V] [--database-url URL] [--schema NAME]
  Stop the schedule's ticks until resume; the paused time inserts no runs.
  Pausing a paused schedule changes nothing.
  --expected-version V    apply only at version V (else exit 3, nothing changed)
`
	schedulesResumeUsage = `docket schedules resume TENANT NAME [--tenantless] [--expected-version V] [--database-url URL] [--schema NAME]
  Let a paused schedule tick again from its first tick after now. Resuming a
  schedule that is not paused changes nothing.
  --expected-version V    apply only at version V (else exit 3, nothing changed)
`
	schedulesRemoveUsage = `docket schedules remove TENANT NAME [--tenantless] [--expected-version V] [--database-url URL] [--schema NAME]
  Delete the schedule. The runs it inserted stay.
  --expected-version V    apply only at version V (else exit 3, nothing changed)
`
)

// schedulesActionUsage maps each schedules action to its usage.
var schedulesActionUsage = map[string]string{
	"list":   schedulesListUsage,
	"add":    schedulesAddUsage,
	"pause":  schedulesPauseUsage,
	"resume": schedulesResumeUsage,
	"remove": schedulesRemoveUsage,
}

package docket

import (
	"time"
)

// scheduleRunIDPrefix marks the run ids that schedule ticks insert.
const scheduleRunIDPrefix = "schedule:"

// scheduleTickLayout is RFC 3339 in UTC at second precision: every tick is
// a whole second (cron ticks whole minutes, intervals whole seconds from a
// start truncated to the second), so the text is one per tick.
const scheduleTickLayout = "2006-01-02T15:04:05Z"

// scheduleRunIDOverhead is the length of a tick run id beyond the tenant id
// and the name: the prefix, the "/" after a tenant id, "@" and the time.
const scheduleRunIDOverhead = len(scheduleRunIDPrefix) + 1 + 1 + len(scheduleTickLayout)

// ScheduleRunID returns the deterministic run id of the run that the tick at
// tick of schedule name in scope inserts: "schedule:<tenant id>/<name>@<tick
// in RFC 3339 UTC>", or "schedule:<name>@<tick>" for the tenantless scope.
// Names hold no "/", so the last "/" separates a tenant id from the name
// and ids of different scopes never collide. Run ids are global, so a run
// inserted by other means under such an id takes the tick's place: the tick
// then inserts nothing.
func ScheduleRunID(scope Scope, name string, tick time.Time) string {
	stamp := tick.UTC().Format(scheduleTickLayout)
	if id, ok := scope.TenantID(); ok {
		return scheduleRunIDPrefix + id + "/" + name + "@" + stamp
	}
	return scheduleRunIDPrefix + name + "@" + stamp
}

package docket_test

import (
	"fmt"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// A cron expression is read in its schedule's time zone: 02:30 every day in
// Berlin is 00:30 UTC in summer and 01:30 UTC in winter, and the night the
// clocks go forward 02:30 does not exist, so that day is skipped.
func ExampleParseCron() {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		fmt.Println(err)
		return
	}
	cron, err := docket.ParseCron("30 2 * * *", berlin)
	if err != nil {
		fmt.Println(err)
		return
	}
	tick := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)
	for range 3 {
		tick = cron.Next(tick)
		fmt.Println(tick.UTC().Format(time.RFC3339))
	}
	_, err = docket.ParseCron("61 * * * *", time.UTC)
	fmt.Println(err)
	// Output:
	// 2026-03-28T01:30:00Z
	// 2026-03-30T00:30:00Z
	// 2026-03-31T00:30:00Z
	// docket: invalid schedule: cron minute "61": 61 is outside 0-59
}

// Each tick of a schedule inserts the run with this id, whichever Worker
// takes it, so a tick taken twice inserts one run.
func ExampleScheduleRunID() {
	tick := time.Date(2026, 12, 1, 2, 30, 0, 0, time.UTC)
	fmt.Println(docket.ScheduleRunID(docket.Tenant("acme"), "nightly-report", tick))
	fmt.Println(docket.ScheduleRunID(docket.Tenantless, "cleanup", tick))
	// Output:
	// schedule:acme/nightly-report@2026-12-01T02:30:00Z
	// schedule:cleanup@2026-12-01T02:30:00Z
}

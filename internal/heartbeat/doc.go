// Package heartbeat refreshes one held claim on a schedule: every interval
// after the previous refresh began, at once when that refresh took longer.
// Between refreshes no goroutine waits for it: a timer runs each refresh and
// arms itself for the next one until the heartbeat's context ends or it
// gives up. The refresh function, the held time and the clock are injected.
package heartbeat

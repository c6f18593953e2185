package heartbeat

import "time"

// Clock is the time source of a heartbeat.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// AfterFunc runs f in its own goroutine once d passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer made by a Clock's AfterFunc.
type Timer interface {
	// Stop prevents the timer from firing, if it has not yet.
	Stop() bool
	// Reset makes the timer fire again once d passed.
	Reset(d time.Duration) bool
}

// SystemClock is the Clock of the time package.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc.
func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

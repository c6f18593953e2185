package maintenance

import "time"

// Clock is the time source of the retention cleaner.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// NewTicker returns a ticker that ticks every d (d > 0).
	NewTicker(d time.Duration) Ticker
}

// Ticker is a ticker made by a Clock.
type Ticker interface {
	// C is the channel the ticks arrive on; a tick missed while nobody
	// reads is dropped, as time.Ticker drops it.
	C() <-chan time.Time
	// Stop ends the ticks.
	Stop()
}

// ScheduleClock is the time source of the schedule taker: a tick is due
// once the clock reached it.
type ScheduleClock interface {
	// Now is the current time.
	Now() time.Time
	// At returns a channel that receives once the clock reached t (at once
	// when it already has).
	At(t time.Time) <-chan time.Time
}

// WallClock is the Clock and the ScheduleClock of the time package.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// NewTicker is time.NewTicker.
func (WallClock) NewTicker(d time.Duration) Ticker { return wallTicker{time.NewTicker(d)} }

// At is time.After of the time until t.
func (WallClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// wallTicker is a time.Ticker as a Ticker.
type wallTicker struct{ t *time.Ticker }

func (w wallTicker) C() <-chan time.Time { return w.t.C }

func (w wallTicker) Stop() { w.t.Stop() }

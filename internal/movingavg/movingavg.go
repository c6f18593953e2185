// Package movingavg keeps exponentially weighted moving averages of
// durations, the measurements the Worker's adaptive decisions rest on.
package movingavg

import "time"

// Weight is the weight of a new observation in every Duration average.
const Weight = 0.2

// Duration is a moving average of durations. Its zero value has observed
// nothing; it is not safe for concurrent use.
type Duration struct {
	avg float64
}

// Observe adds d, counted as at least a microsecond, to the average; the
// first observation is the average.
func (a *Duration) Observe(d time.Duration) {
	ns := float64(max(d, time.Microsecond))
	if a.avg == 0 {
		a.avg = ns
		return
	}
	a.avg += Weight * (ns - a.avg)
}

// Value is the average, 0 before the first observation.
func (a *Duration) Value() time.Duration { return time.Duration(a.avg) }

package main

import (
	"slices"
	"time"
)

// percentile is the nearest-rank percentile p (0 < p <= 100) of values; it
// sorts values in place and returns 0 when there are none.
func percentile(values []time.Duration, p float64) time.Duration {
	if len(values) == 0 {
		return 0
	}
	slices.Sort(values)
	rank := int(p/100*float64(len(values)) + 0.999999)
	return values[min(max(rank, 1), len(values))-1]
}

// mean is the arithmetic mean of values (0 when empty).
func mean(values []time.Duration) time.Duration {
	if len(values) == 0 {
		return 0
	}
	var sum time.Duration
	for _, v := range values {
		sum += v
	}
	return sum / time.Duration(len(values))
}

// jain is Jain's fairness index of xs: (sum x)^2 / (n * sum x^2), 1 when
// all are equal, 1/n when one takes everything. It is 1 for no values or
// all zeros.
func jain(xs []float64) float64 {
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	if squares == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * squares)
}

// latency summarizes call durations.
type latency struct {
	Calls int     `json:"calls"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
}

// summarize returns the count, median and 99th percentile of calls.
func summarize(calls []time.Duration) latency {
	return latency{Calls: len(calls), P50Ms: ms(percentile(calls, 50)), P99Ms: ms(percentile(calls, 99))}
}

// ms converts d to fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ratio is a / b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

package docket

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// RetryPolicy is how a Worker retries a handler attempt that failed: a Fail
// verdict, a recovered panic or the zero Result. An attempt numbered n (see
// Job.Attempt) that fails while n < MaxAttempts is retried: the run is
// released (ReleaseAt) until the commit time plus the delay of n, and its
// failure joins the run's error history. The attempt numbered MaxAttempts
// fails the run, keeping the whole history. The delay of attempt n is
// min(Backoff * Multiplier^(n-1), MaxBackoff), from which a random fraction
// of at most Jitter is taken off, truncated to the microsecond; so no delay
// exceeds MaxBackoff and none is below (1-Jitter) of the undisturbed one.
//
// The zero RetryPolicy keeps a failure failing the run at once (MaxAttempts
// 1). Zero durations and a zero Multiplier take the documented defaults; a
// zero Jitter means none.
type RetryPolicy struct {
	// MaxAttempts is the number of handler attempts a run gets before a
	// failure fails it, counted since its last Complete, Continue or
	// WaitExternal verdict; 0 means DefaultRetryMaxAttempts (1: no retry).
	MaxAttempts int
	// Backoff is the delay after the first failed attempt (0:
	// DefaultRetryBackoff).
	Backoff time.Duration
	// MaxBackoff caps the delay (0: DefaultRetryMaxBackoff); it must not be
	// below Backoff.
	MaxBackoff time.Duration
	// Multiplier grows the delay from one failed attempt to the next, >= 1
	// (0: DefaultRetryMultiplier).
	Multiplier float64
	// Jitter, in 0..1, is the largest fraction of the delay taken off at
	// random, so runs that failed together do not retry together.
	Jitter float64
	// Random, when set, draws the jitter: a value in [0, 1) (values outside
	// are clamped). It is called concurrently from the worker's handler
	// goroutines. Nil uses math/rand/v2; tests inject a fixed source so
	// delays are exact.
	Random func() float64
}

// Defaults of RetryPolicy.
const (
	// DefaultRetryMaxAttempts is the MaxAttempts of a zero field: a failed
	// attempt fails the run at once, so nothing is retried unless asked.
	DefaultRetryMaxAttempts = 1
	// DefaultRetryBackoff is the Backoff of a zero field.
	DefaultRetryBackoff = time.Second
	// DefaultRetryMaxBackoff is the MaxBackoff of a zero field.
	DefaultRetryMaxBackoff = 10 * time.Minute
	// DefaultRetryMultiplier is the Multiplier of a zero field.
	DefaultRetryMultiplier = 2.0
)

// RetryPolicyError reports a WorkerConfig.Retry that NewWorker refuses
// before starting anything, or a HandlerRetry that Register refuses. It
// matches ErrInvalidConfig with errors.Is.
type RetryPolicyError struct {
	// Field names the refused RetryPolicy field.
	Field string
	// Reason says what is wrong with it.
	Reason string
	// GraphID names the graph whose HandlerRetry was refused; it is empty
	// for WorkerConfig.Retry.
	GraphID string
}

// Error names the policy, the field and the reason.
func (e *RetryPolicyError) Error() string {
	if e.GraphID != "" {
		return fmt.Sprintf("%v: HandlerRetry of graph %q: %s %s", ErrInvalidConfig, e.GraphID, e.Field, e.Reason)
	}
	return fmt.Sprintf("%v: worker Retry.%s %s", ErrInvalidConfig, e.Field, e.Reason)
}

// Is makes a RetryPolicyError match ErrInvalidConfig.
func (e *RetryPolicyError) Is(target error) bool { return target == ErrInvalidConfig }

// resolve validates p and fills in its defaults.
func (p RetryPolicy) resolve() (RetryPolicy, error) {
	refuse := func(field, format string, args ...any) (RetryPolicy, error) {
		return p, &RetryPolicyError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.MaxAttempts < 0 || p.MaxAttempts > math.MaxInt32:
		return refuse("MaxAttempts", "%d is outside 1..%d", p.MaxAttempts, math.MaxInt32)
	case p.Backoff < 0:
		return refuse("Backoff", "%v is negative", p.Backoff)
	case p.MaxBackoff < 0:
		return refuse("MaxBackoff", "%v is negative", p.MaxBackoff)
	case p.Multiplier != 0 && !(p.Multiplier >= 1 && p.Multiplier <= math.MaxFloat64):
		return refuse("Multiplier", "%v is not a finite number >= 1", p.Multiplier)
	case !(p.Jitter >= 0 && p.Jitter <= 1):
		return refuse("Jitter", "%v is outside 0..1", p.Jitter)
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultRetryMaxAttempts
	}
	if p.Backoff == 0 {
		p.Backoff = DefaultRetryBackoff
	}
	if p.MaxBackoff == 0 {
		p.MaxBackoff = max(DefaultRetryMaxBackoff, p.Backoff)
	}
	if p.MaxBackoff < p.Backoff {
		return refuse("MaxBackoff", "%v is below Backoff %v", p.MaxBackoff, p.Backoff)
	}
	if p.Multiplier == 0 {
		p.Multiplier = DefaultRetryMultiplier
	}
	if p.Random == nil {
		p.Random = rand.Float64
	}
	return p, nil
}

// backoff is the delay after the failed attempt numbered attempt (>= 1) of
// a resolved policy.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := math.Min(float64(p.Backoff)*math.Pow(p.Multiplier, float64(attempt-1)), float64(p.MaxBackoff))
	if p.Jitter > 0 {
		r := p.Random()
		if !(r >= 0) {
			r = 0
		}
		d -= d * p.Jitter * math.Min(r, 1)
	}
	return time.Duration(d).Truncate(time.Microsecond)
}

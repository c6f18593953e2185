package docket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/maintenance"
)

// Handler runs one claimed run and says what happens to it next. It runs on
// its own goroutine, concurrently with the worker's other handlers. Its
// context is cancelled when the worker loses the claim (context.Cause is then
// ErrClaimLost) or stops before the handler returned (ErrWorkerStopped); a
// handler should return promptly then, since whatever it returns afterwards
// is dropped or refused by the claim fence. Its context also carries the
// handler timeout's deadline (WorkerConfig.HandlerTimeout). A panic is
// recovered and counts as a failed attempt (see Fail and RetryPolicy).
type Handler func(ctx context.Context, job *Job) Result

// WorkerConfig configures a Worker. Zero durations, a zero MaxClaimAttempts
// and the zero Retry take the documented defaults: failed attempts are
// retried (DefaultRetryMaxAttempts attempts in all, with capped exponential
// backoff and jitter) and every handler call times out after
// DefaultHandlerTimeout.
type WorkerConfig struct {
	// Concurrency is how many runs the worker handles at once, >= 1. The
	// worker has a claim slot per handler and the runs it holds ahead more
	// (WorkerTuning.ClaimAhead), and each poll asks ClaimDue for exactly the
	// free claim slots. A slot whose handler returned is free while its
	// verdict is being written, for at most one such verdict per claim slot
	// (with WorkerTuning.VerdictBatchWait, for at most the larger of the
	// claim slots and MaxVerdictBatch), so the worker holds up to its claim
	// slots plus that many claims. The client's pool needs room
	// for them: one connection is kept for LISTEN, and every handled run
	// refreshes and commits through the pool.
	Concurrency int
	// Handler runs each claimed run. Set it or Handlers, not both.
	Handler Handler
	// HandlerTimeout bounds each handler call: its context's deadline is
	// HandlerTimeout after the call starts (context.Cause is then a
	// *HandlerTimeoutError, ctx.Err() context.DeadlineExceeded). A handler
	// still running when it passes has failed its attempt: whatever it
	// returns is replaced by a failure with that error, recorded in the
	// run's error history with kind "error" and retried under the retry
	// policy like a Fail (checkpoint type "backoff", "timeout" for the
	// last attempt); a handler should return promptly once its context
	// ends. A verdict it wrote with Job.CommitTx before stays written.
	// Zero means DefaultHandlerTimeout (one minute); NoHandlerTimeout sets
	// none; any other negative value is refused. A graph registered in
	// Handlers with the HandlerTimeout option uses its own.
	HandlerTimeout time.Duration
	// Middleware wraps every handler call of the worker, the first
	// outermost: it sees each Job and the Result of the handler, and may
	// change it (see Middleware). A graph's HandlerMiddleware runs inside
	// the worker's. A nil entry is refused.
	Middleware []Middleware
	// Handlers routes each claimed run to the typed handler registered for
	// its graph id, with that graph's timeout and retry policy (see
	// Register). Set it or Handler, not both.
	Handlers *Handlers
	// ListenURL, when set, is the connection string (a URL or keyword/value
	// DSN) of a direct connection to the server that the worker's LISTEN
	// session uses, while every other statement goes through the client's
	// pool: behind a transaction-mode pooler (PgBouncer) a LISTEN session
	// on a pooled connection receives nothing, so wake-ups wait for the
	// poll and an operator's cancel for a heartbeat. Give it the server's
	// own address with the pool's search_path (or use Config.Schema).
	// Empty (the default) takes the LISTEN connection from the pool, which
	// is right without a transaction-mode pooler.
	ListenURL string
	// PollInterval is the longest the worker waits before asking for work
	// again when no notification arrives (default 1s). Runs inserted due now
	// wake it at once through LISTEN/NOTIFY; future wake times, retries,
	// claims that expire and runs made due by other writes (MutateRun,
	// ReleaseClaim) are found by polling.
	PollInterval time.Duration
	// ClaimTTL is the orphan TTL of the worker's claim calls: a claim not
	// refreshed for that long is expired and may be stolen, by this worker or
	// any other (default 30s). A worker whose claim could not be refreshed
	// for ClaimTTL presumes it lost and cancels the handler.
	ClaimTTL time.Duration
	// HeartbeatInterval is how often each held claim is refreshed; it must
	// be positive and shorter than ClaimTTL (default ClaimTTL/3).
	HeartbeatInterval time.Duration
	// MaxClaimAttempts poisons a run whose claim attempts since its last
	// commit reached it instead of leasing it again (default 10).
	MaxClaimAttempts int
	// Logger receives the worker's structured logs (nil: the client's
	// logger). Info and warn records carry no tenant, run or token
	// identity; run ids appear at debug level only.
	Logger *slog.Logger
	// OnEvent, when set, is called with every WorkerEvent as it happens:
	// the LISTEN session started, a claim call returned, a handler is about
	// to start, a verdict was written, fenced out, dropped or failed, a
	// retention or schedule pass ended, a schedule tick was taken. It is
	// called synchronously, concurrently from the worker's goroutines, so it
	// must be safe for concurrent use and must not block or panic; hand
	// anything slow to a goroutine of its own. Events carry run identities.
	// Nil (the default) costs a nil check per event.
	OnEvent func(WorkerEvent)
	// Retention is the worker's periodic cleaner of finished runs (see
	// WorkerRetention): on by default, done and cancelled runs are kept a
	// day and failed runs a week; Retention.Off keeps everything.
	Retention WorkerRetention
	// Schedules makes the worker take the domain's due schedule ticks (see
	// AddSchedule): it wakes at the earliest next tick, on a notification
	// (AddSchedule and ResumeSchedule send one) and at least every
	// PollInterval, and takes each batch of due schedules in one
	// transaction (TakeDueTicksTx). Any number of workers may take ticks:
	// each tick inserts at most one run. False (the default) takes none.
	Schedules bool
	// Tuning holds what the Worker otherwise decides for itself: how many
	// runs it claims ahead of its handlers and how long verdicts wait to
	// share a commit. Leave it zero unless a measurement says otherwise.
	Tuning WorkerTuning
	// Retry is how failed handler attempts (Fail, a panic, the zero
	// Result, a timeout) are retried. The zero value is the default policy
	// (see RetryPolicy): 25 attempts in all, the delays doubling from one
	// second up to an hour, each up to a tenth shorter at random, about 13
	// hours from the first failure to the last attempt.
	// RetryPolicy{MaxAttempts: 1} retries none: a failure fails the run at
	// once. A graph registered in Handlers with HandlerRetry uses its own
	// policy instead, and a run inserted with NewRun.MaxAttempts its own
	// attempts. An invalid policy is a *RetryPolicyError.
	Retry RetryPolicy
}

// WorkerTuning is a Worker's tuning, kept apart from WorkerConfig's
// ordinary settings: its zero value is right for the common case, where the
// Worker measures and decides.
type WorkerTuning struct {
	// ClaimAhead is how many claimed runs the worker may hold beyond its
	// Concurrency handlers, each waiting for a handler to return. Zero (the
	// default) lets the worker decide from what it measures: it holds about
	// as many runs as its handlers finish while one claim call takes, that
	// is Concurrency x (claim call time / handler time), rounded, at most
	// 4 x Concurrency and at most 64, both times moving averages of its own
	// calls; with handlers much longer than a claim call it holds none.
	// NoClaimAhead holds none, a positive value holds exactly that many.
	//
	// A held run's handler starts as soon as another returns, so a handler
	// does not wait for a claim call between runs: the claim calls overlap
	// the handlers instead. The price: a held run is claimed while it
	// waits, so under TenantFair it holds its tenant's admission (it counts
	// against the tenant's cap), and it may start up to a handler's
	// duration later than on a worker with a free handler. Held runs are
	// refreshed like running ones, and their phase reads PhaseExecuting as a
	// running run's does; a stopping worker starts none of them and hands
	// each back at once with the admission kept (a "stop" verdict), so each
	// is due for the next worker.
	ClaimAhead int
	// VerdictBatchWait, when positive, lets the verdicts of handlers that
	// return close together share one commit statement even when they came
	// from different claim calls: the first waits this long for others
	// (less once MaxVerdictBatch verdicts wait), and the slot of each waiting
	// verdict is freed at once, so the worker goes on claiming meanwhile. It
	// saves the database a statement per verdict, which matters most for
	// many small workers of short runs. The price: a verdict lands up to
	// this much later, and until then its run stays running and, under
	// TenantFair, holds its tenant's admission; a crash loses the waiting
	// verdicts, whose runs are claimed again after ClaimTTL as a crashed
	// handler's are. Stopping writes the waiting verdicts at once. It must
	// be shorter than ClaimTTL minus HeartbeatInterval, since a returned
	// handler's claim is no longer refreshed. Zero (the default) lets the
	// worker decide from what it measures (moving averages): its wait is as
	// long as a claim call or a commit statement takes, whichever is
	// longer, at most 20 ms and half of ClaimTTL minus HeartbeatInterval.
	// While verdicts arrive closer together than that wait, the first waits
	// it for the verdicts of any claim call (at most one per claim slot);
	// otherwise a verdict is written as soon as the other jobs of its claim
	// call returned, or 200 µs passed. Either way verdicts wait for other
	// claim calls' only while the worker's claim calls lease all they ask
	// for: a call that comes back short, since caps, rates or an empty
	// queue held work back, writes the waiting verdicts at once, so that no
	// waiting verdict holds an admission a run waits for.
	VerdictBatchWait time.Duration
}

// NoClaimAhead, as WorkerTuning.ClaimAhead, holds no claimed run beyond the
// Worker's handlers.
const NoClaimAhead = -1

// adaptiveAheadPerHandler and adaptiveAheadMax bound the runs a Worker
// holds ahead when it decides for itself (WorkerTuning.ClaimAhead zero).
const (
	adaptiveAheadPerHandler = 4
	adaptiveAheadMax        = 64
)

// aheadBound is the most runs the worker may hold ahead: the configured
// number, none, or the adaptive bound.
func (cfg WorkerConfig) aheadBound() int {
	switch ahead := cfg.Tuning.ClaimAhead; {
	case ahead > 0:
		return ahead
	case ahead == NoClaimAhead:
		return 0
	}
	return min(adaptiveAheadPerHandler*cfg.Concurrency, adaptiveAheadMax)
}

// MaxVerdictBatch is the most verdicts a batch gathered under
// WorkerTuning.VerdictBatchWait waits for: a batch that holds them is
// written at once. A worker with fewer slots may free that many slots early
// while their verdicts wait.
const MaxVerdictBatch = 64

// claimSlots is how many claims the worker may hold: one per handler and
// the most it may hold ahead.
func (cfg WorkerConfig) claimSlots() int {
	return cfg.Concurrency + cfg.aheadBound()
}

// committingCapacity is how many jobs may have their slot freed while their
// verdict is still being written: one per claim slot, and at least
// MaxVerdictBatch when verdicts wait for a batch.
func (cfg WorkerConfig) committingCapacity() int {
	if cfg.Tuning.VerdictBatchWait > 0 {
		return max(cfg.claimSlots(), MaxVerdictBatch)
	}
	return cfg.claimSlots()
}

// Defaults of WorkerConfig.
const (
	// DefaultPollInterval is the PollInterval of a zero WorkerConfig field.
	DefaultPollInterval = time.Second
	// DefaultClaimTTL is the ClaimTTL of a zero WorkerConfig field.
	DefaultClaimTTL = 30 * time.Second
	// DefaultMaxClaimAttempts is the MaxClaimAttempts of a zero WorkerConfig field.
	DefaultMaxClaimAttempts = 10
	// DefaultHandlerTimeout is the HandlerTimeout of a zero WorkerConfig
	// field.
	DefaultHandlerTimeout = time.Minute
	// NoHandlerTimeout, as WorkerConfig.HandlerTimeout or a graph's
	// HandlerTimeout, sets no timeout on the handler's calls.
	NoHandlerTimeout time.Duration = -1
)

// ErrHandlerTimeout is matched (errors.Is) by the *HandlerTimeoutError of a
// handler call that outlived its timeout.
var ErrHandlerTimeout = errors.New("docket: handler timed out")

// HandlerTimeoutError is the cause (context.Cause) of a handler context
// whose timeout passed, and the error of the attempt it failed. Its text,
// recorded in the run's error history, is "docket: handler timed out after"
// and the timeout. It matches ErrHandlerTimeout and
// context.DeadlineExceeded with errors.Is.
type HandlerTimeoutError struct {
	// Timeout is the timeout that passed.
	Timeout time.Duration
}

// Error names the timeout.
func (e *HandlerTimeoutError) Error() string {
	return fmt.Sprintf("%v after %v", ErrHandlerTimeout, e.Timeout)
}

// Is makes a HandlerTimeoutError match ErrHandlerTimeout and
// context.DeadlineExceeded.
func (e *HandlerTimeoutError) Is(target error) bool {
	return target == ErrHandlerTimeout || target == context.DeadlineExceeded
}

// resolve validates cfg and fills in its defaults.
func (cfg WorkerConfig) resolve(client *Client) (WorkerConfig, error) {
	switch {
	case client == nil:
		return cfg, invalidConfig("worker needs a client")
	case cfg.Handler == nil && cfg.Handlers == nil:
		return cfg, invalidConfig("worker needs a Handler or Handlers")
	case cfg.Handler != nil && cfg.Handlers != nil:
		return cfg, invalidConfig("worker takes a Handler or Handlers, not both")
	case cfg.Concurrency < 1 || cfg.Concurrency > math.MaxInt32:
		return cfg, invalidConfig("worker Concurrency %d is outside 1..%d", cfg.Concurrency, math.MaxInt32)
	case cfg.Tuning.ClaimAhead < NoClaimAhead || cfg.Tuning.ClaimAhead > math.MaxInt32-cfg.Concurrency:
		return cfg, invalidConfig("worker ClaimAhead %d is outside 1..%d, 0 (the worker decides) or NoClaimAhead",
			cfg.Tuning.ClaimAhead, math.MaxInt32-cfg.Concurrency)
	case cfg.PollInterval < 0 || cfg.ClaimTTL < 0 || cfg.HeartbeatInterval < 0 || cfg.Tuning.VerdictBatchWait < 0:
		return cfg, invalidConfig("worker durations must not be negative")
	case cfg.MaxClaimAttempts < 0 || cfg.MaxClaimAttempts > math.MaxInt32:
		return cfg, invalidConfig("worker MaxClaimAttempts %d is outside 1..%d", cfg.MaxClaimAttempts, math.MaxInt32)
	case cfg.HandlerTimeout < 0 && cfg.HandlerTimeout != NoHandlerTimeout:
		return cfg, invalidConfig("worker HandlerTimeout %v is negative and not NoHandlerTimeout", cfg.HandlerTimeout)
	case slices.ContainsFunc(cfg.Middleware, isNilMiddleware):
		return cfg, invalidConfig("worker Middleware holds a nil middleware")
	}
	if cfg.HandlerTimeout == 0 {
		cfg.HandlerTimeout = DefaultHandlerTimeout
	}
	if cfg.ListenURL != "" {
		if _, err := pgx.ParseConfig(cfg.ListenURL); err != nil {
			return cfg, invalidConfig("worker ListenURL: %v", err)
		}
	}
	retention, err := cfg.Retention.resolve()
	if err != nil {
		return cfg, err
	}
	cfg.Retention = retention
	retry, err := cfg.Retry.resolve()
	if err != nil {
		return cfg, err
	}
	cfg.Retry = retry
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.ClaimTTL == 0 {
		cfg.ClaimTTL = DefaultClaimTTL
	}
	if cfg.HeartbeatInterval == 0 {
		cfg.HeartbeatInterval = cfg.ClaimTTL / 3
	}
	if cfg.HeartbeatInterval <= 0 || cfg.HeartbeatInterval >= cfg.ClaimTTL {
		return cfg, invalidConfig("worker HeartbeatInterval %v must be shorter than ClaimTTL %v", cfg.HeartbeatInterval, cfg.ClaimTTL)
	}
	if cfg.Tuning.VerdictBatchWait >= cfg.ClaimTTL-cfg.HeartbeatInterval {
		return cfg, invalidConfig("worker VerdictBatchWait %v must be shorter than ClaimTTL %v minus HeartbeatInterval %v",
			cfg.Tuning.VerdictBatchWait, cfg.ClaimTTL, cfg.HeartbeatInterval)
	}
	if cfg.MaxClaimAttempts == 0 {
		cfg.MaxClaimAttempts = DefaultMaxClaimAttempts
	}
	if cfg.Logger == nil {
		cfg.Logger = client.logger
	}
	return cfg, nil
}

// workerCallTimeout bounds one database call of the worker (claim, read,
// commit, release, notify), so a hung connection cannot stall it forever.
const workerCallTimeout = 30 * time.Second

// Backoff bounds after a failed call: the wait doubles from
// errorBackoffBase up to errorBackoffMax.
const (
	errorBackoffBase = 100 * time.Millisecond
	errorBackoffMax  = 5 * time.Second
)

// errorBackoff is the wait after the given number of consecutive failures
// (>= 1): exponential with jitter in its upper half, so workers that failed
// together do not retry together.
func errorBackoff(failures int) time.Duration {
	d := errorBackoffBase << min(max(failures-1, 0), 6)
	d = min(d, errorBackoffMax)
	return d/2 + rand.N(d/2+1)
}

// RetryPolicy is how a Worker retries a handler attempt that failed: a Fail
// verdict, a recovered panic, the zero Result or a handler timeout. An
// attempt numbered n (see Job.Attempt) that fails while n < MaxAttempts (or
// the run's own NewRun.MaxAttempts) is retried: the run is released
// (ReleaseAt) until the commit time plus the delay of n, and its failure
// joins the run's error history. The attempt numbered MaxAttempts fails the
// run, keeping the whole history. The delay of attempt n is
// min(Backoff * Multiplier^(n-1), MaxBackoff), from which a random fraction
// of at most Jitter is taken off, truncated to the microsecond; so no delay
// exceeds MaxBackoff and none is below (1-Jitter) of the undisturbed one.
// A retry due before the Worker's next poll wakes it at its due time.
//
// The zero RetryPolicy is the default policy: DefaultRetryMaxAttempts (25)
// attempts, a DefaultRetryBackoff (1s) delay doubling up to
// DefaultRetryMaxBackoff (1h) and DefaultRetryJitter (a tenth): the delays
// run 1s, 2s, 4s... 34m8s, then an hour each, about 13 hours from the first
// failure to the last attempt, enough to outlast a database restart or a
// dependency's outage of hours. RetryPolicy{MaxAttempts: 1} retries
// nothing. In a policy with any field set, zero durations, a zero
// MaxAttempts and a zero Multiplier take the same defaults, and a zero
// Jitter means none.
type RetryPolicy struct {
	// MaxAttempts is the number of handler attempts a run gets before a
	// failure fails it, counted since its last Continue or WaitExternal
	// verdict; 0 means DefaultRetryMaxAttempts, 1 no retry.
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
	// random, so runs that failed together do not retry together (0: none,
	// but DefaultRetryJitter in the zero RetryPolicy).
	Jitter float64
	// Random, when set, draws the jitter: a value in [0, 1) (values outside
	// are clamped). It is called concurrently from the worker's handler
	// goroutines. Nil uses math/rand/v2; tests inject a fixed source so
	// delays are exact.
	Random func() float64
}

// Defaults of RetryPolicy.
const (
	// DefaultRetryMaxAttempts is the MaxAttempts of a zero field: the first
	// call and 24 retries.
	DefaultRetryMaxAttempts = 25
	// DefaultRetryBackoff is the Backoff of a zero field.
	DefaultRetryBackoff = time.Second
	// DefaultRetryMaxBackoff is the MaxBackoff of a zero field.
	DefaultRetryMaxBackoff = time.Hour
	// DefaultRetryMultiplier is the Multiplier of a zero field.
	DefaultRetryMultiplier = 2.0
	// DefaultRetryJitter is the Jitter of the zero RetryPolicy.
	DefaultRetryJitter = 0.1
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
		return fmt.Sprintf("%v: HandlerRetry of graph %s: %s %s", ErrInvalidConfig, quoteID(e.GraphID), e.Field, e.Reason)
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
	if p.MaxAttempts == 0 && p.Backoff == 0 && p.MaxBackoff == 0 && p.Multiplier == 0 && p.Jitter == 0 {
		p.Jitter = DefaultRetryJitter
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

// Defaults of WorkerRetention's zero fields.
const (
	// DefaultRetentionEvery is the pause between a worker's retention passes.
	DefaultRetentionEvery = 5 * time.Minute
	// DefaultKeepDone is how long a done run is kept.
	DefaultKeepDone = 24 * time.Hour
	// DefaultKeepCancelled is how long a cancelled run is kept.
	DefaultKeepCancelled = 24 * time.Hour
	// DefaultKeepFailed is how long a failed run is kept.
	DefaultKeepFailed = 7 * 24 * time.Hour
)

// WorkerRetention configures a Worker's periodic cleaner of finished runs,
// which calls DeleteFinishedRuns for each finished status while the worker
// runs. It is on by default: the zero value deletes done and cancelled runs
// a day after they finished and failed runs after a week; Off keeps
// everything. The worker's role needs DELETE on docket_runs (docs/grants.sql
// grants it), and a pass holds one more pool connection while it runs.
// Several workers of a domain may clean at once: each batch skips the rows
// another one holds, so no run is deleted twice and no pass waits on a lock.
type WorkerRetention struct {
	// Off turns the cleaner off: the worker deletes nothing.
	Off bool
	// Every is the pause between passes; zero means DefaultRetentionEvery.
	// The first pass runs when the worker starts.
	Every time.Duration
	// Done, Cancelled and Failed are how long runs that finished in each
	// status are kept, by the worker's clock: a pass deletes those that
	// finished longer ago. Zero means DefaultKeepDone, DefaultKeepCancelled
	// and DefaultKeepFailed.
	Done, Cancelled, Failed time.Duration
	// BatchSize is DeleteFinishedRunsOptions.BatchSize: 1..MaxRetentionBatch,
	// zero for DefaultRetentionBatch.
	BatchSize int
}

// resolve refuses a retention configuration DeleteFinishedRuns or the
// cleaner's timer could not use and fills in the defaults.
func (r WorkerRetention) resolve() (WorkerRetention, error) {
	switch {
	case r.Every < 0 || r.Done < 0 || r.Cancelled < 0 || r.Failed < 0:
		return r, invalidConfig("worker Retention durations must not be negative")
	case r.BatchSize < 0 || r.BatchSize > MaxRetentionBatch:
		return r, invalidConfig("worker Retention.BatchSize %d is outside 1..%d", r.BatchSize, MaxRetentionBatch)
	}
	for _, d := range []struct {
		value *time.Duration
		def   time.Duration
	}{{&r.Every, DefaultRetentionEvery}, {&r.Done, DefaultKeepDone}, {&r.Cancelled, DefaultKeepCancelled}, {&r.Failed, DefaultKeepFailed}} {
		if *d.value == 0 {
			*d.value = d.def
		}
	}
	return r, nil
}

// keep is how long runs that finished in status are kept.
func (r WorkerRetention) keep(status RunStatus) time.Duration {
	switch status {
	case StatusDone:
		return r.Done
	case StatusCancelled:
		return r.Cancelled
	}
	return r.Failed
}

// retentionCleaner returns the cleaner of w's Retention, deleting through
// w's client and reporting each pass as an EventRetention.
func (w *Worker) retentionCleaner() *maintenance.RetentionCleaner {
	r := w.cfg.Retention
	keep := make([]maintenance.Keep, len(finishedStatuses))
	for i, status := range finishedStatuses {
		keep[i] = maintenance.Keep{Status: string(status), For: r.keep(status)}
	}
	return maintenance.NewRetentionCleaner(maintenance.RetentionConfig{
		Every:     r.Every,
		Keep:      keep,
		BatchSize: r.BatchSize,
		DeleteFinished: func(ctx context.Context, status string, cutoff time.Time, batch int) (int64, error) {
			return w.client.DeleteFinishedRuns(ctx, DeleteFinishedRunsOptions{
				Status:         RunStatus(status),
				FinishedBefore: cutoff,
				BatchSize:      batch,
			})
		},
		Logger: w.logger,
		OnPass: func(deleted int64, err error) {
			w.emit(WorkerEvent{Kind: EventRetention, Deleted: deleted, Err: err})
		},
	})
}

// ScheduleClock is the clock a Worker takes schedule ticks by: a tick is due
// when the clock has reached it. Workers read the wall clock; tests give
// NewTestWorker a clock of their own to drive ticks without waiting.
type ScheduleClock interface {
	// Now returns the clock's current time.
	Now() time.Time
	// At returns a channel that receives once the clock reaches t (at once
	// when it has already).
	At(t time.Time) <-chan time.Time
}

// wallClock is the ScheduleClock of real time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// scheduleTaker returns the schedule taker of w: it takes ticks through
// w's client by w's ScheduleClock, wakes on wake (AddSchedule and
// ResumeSchedule notify) and reports each taken tick as an
// EventScheduleTick, after its commit, and each pass as an
// EventSchedulePass.
func (w *Worker) scheduleTaker(wake <-chan struct{}) *maintenance.ScheduleTaker[ScheduleTick] {
	return maintenance.NewScheduleTaker(maintenance.ScheduleConfig[ScheduleTick]{
		PollInterval: w.cfg.PollInterval,
		Clock:        w.scheduleClock,
		Wake:         wake,
		TakeBatch:    w.scheduleBatch,
		NextTick:     w.nextScheduleTick,
		Backoff:      errorBackoff,
		Logger:       w.logger,
		OnTick: func(t ScheduleTick) {
			w.emit(WorkerEvent{Kind: EventScheduleTick, RunID: t.RunID, Scope: t.Scope, Schedule: t.Schedule, TickAt: t.At, Err: t.Err})
		},
		OnPass: func(ticks int, err error) {
			w.emit(WorkerEvent{Kind: EventSchedulePass, Ticks: ticks, Err: err})
		},
	})
}

// nextScheduleTick returns the earliest next tick of the domain, the zero
// time when no schedule is unpaused.
func (w *Worker) nextScheduleTick(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	next, err := w.client.queries.NextScheduleTick(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	return next, err
}

// scheduleBatch takes one batch of due ticks in a transaction of its own.
func (w *Worker) scheduleBatch(ctx context.Context, now time.Time) ([]ScheduleTick, bool, error) {
	callCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	var (
		ticks []ScheduleTick
		full  bool
	)
	err := w.client.inTx(callCtx, func(q *dbgen.Queries) error {
		var err error
		ticks, full, err = w.client.takeDueTicks(callCtx, q, now, DefaultScheduleBatch)
		return err
	})
	return ticks, full, err
}

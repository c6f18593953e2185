package docket

import (
	"context"
	"log/slog"
	"math"
	"time"
)

// Handler runs one claimed run and says what happens to it next. It runs on
// its own goroutine, concurrently with the worker's other handlers. Its
// context is cancelled when the worker loses the claim (context.Cause is then
// ErrClaimLost) or stops before the handler returned (ErrWorkerStopped); a
// handler should return promptly then, since whatever it returns afterwards
// is dropped or refused by the claim fence. A panic is recovered and counts
// as a failed attempt (see Fail and RetryPolicy).
type Handler func(ctx context.Context, job *Job) Result

// WorkerConfig configures a Worker. Zero durations and a zero
// MaxClaimAttempts take the documented defaults.
type WorkerConfig struct {
	// Concurrency is how many runs the worker handles at once, >= 1. Each
	// poll asks ClaimDue for exactly the free slots. A slot whose handler
	// returned is free while its verdict is being written, for at most
	// Concurrency such verdicts, so up to twice Concurrency claims are held. The client's pool needs
	// room for them: one connection is kept for LISTEN, and every handled
	// run refreshes and commits through the pool.
	Concurrency int
	// Handler runs each claimed run. Set it or Handlers, not both.
	Handler Handler
	// Handlers routes each claimed run to the typed handler registered for
	// its graph id, with that graph's timeout and retry policy (see
	// Register). Set it or Handler, not both.
	Handlers *Handlers
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
	// ScheduleClock is the clock the schedule taker reads and waits on; nil
	// is the wall clock. It exists for tests, which advance a clock of
	// their own instead of waiting for real ticks.
	ScheduleClock ScheduleClock
	// Retry is how failed handler attempts (Fail, a panic, the zero
	// Result) are retried; the zero value retries none, so a failure fails
	// the run at once. A graph registered in Handlers with HandlerRetry uses
	// its own policy instead. An invalid policy is a *RetryPolicyError.
	Retry RetryPolicy
}

// Defaults of WorkerConfig.
const (
	// DefaultPollInterval is the PollInterval of a zero WorkerConfig field.
	DefaultPollInterval = time.Second
	// DefaultClaimTTL is the ClaimTTL of a zero WorkerConfig field.
	DefaultClaimTTL = 30 * time.Second
	// DefaultMaxClaimAttempts is the MaxClaimAttempts of a zero WorkerConfig field.
	DefaultMaxClaimAttempts = 10
)

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
	case cfg.PollInterval < 0 || cfg.ClaimTTL < 0 || cfg.HeartbeatInterval < 0:
		return cfg, invalidConfig("worker durations must not be negative")
	case cfg.MaxClaimAttempts < 0 || cfg.MaxClaimAttempts > math.MaxInt32:
		return cfg, invalidConfig("worker MaxClaimAttempts %d is outside 1..%d", cfg.MaxClaimAttempts, math.MaxInt32)
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
	if cfg.MaxClaimAttempts == 0 {
		cfg.MaxClaimAttempts = DefaultMaxClaimAttempts
	}
	if cfg.Logger == nil {
		cfg.Logger = client.logger
	}
	if cfg.ScheduleClock == nil {
		cfg.ScheduleClock = wallClock{}
	}
	return cfg, nil
}

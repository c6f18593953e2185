package docket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/jobcompleter"
	"github.com/docketrun/docket-go/internal/notifier"
	"github.com/docketrun/docket-go/internal/startstop"
)

// Errors of the worker runtime.
var (
	// ErrWorkerStopped is the cause of a handler's context cancellation when
	// the worker stops before the handler returned.
	ErrWorkerStopped = errors.New("docket: worker stopped")
	// ErrWorkerStarted reports a second call of Worker.Run.
	ErrWorkerStarted = errors.New("docket: worker already started")
)

// Worker claims due runs through its client's engine, as ClaimDue does, and
// runs them through its Handler, or the handler its Handlers registry holds
// for each run's graph id, up to Concurrency at a time.
//
// The worker has a claim slot per handler and the runs it holds ahead more
// (WorkerTuning.ClaimAhead: by default as many as its handlers finish while
// one claim call takes), whose runs wait for a handler to return. Each poll asks for exactly the
// free claim slots; a poll with one free slot alternates its class
// preference between ready and expired work, so stolen and fresh work both
// get served. While runs are in flight, a freed slot waits for the others
// as long as the last claim call took, within 2 to 20 ms, so each claim call
// carries more demand. The runs a poll leased are read by a statement sent
// in the same batch and transaction as the claim, and the verdicts of jobs
// that finish together are committed in one statement, each still fenced on
// its own claim. A job's slot is freed as soon as its handler returned a
// verdict that releases the claim, while that verdict is still being
// written, for at most one such job per claim slot at a time: the next
// claim call overlaps the commit, and the worker holds at most twice its
// claim slots in claims. The worker wakes at once when runs are
// inserted due now (LISTEN/NOTIFY on a connection of its own; InsertRun,
// InsertRuns and the worker's own yields notify) and otherwise polls every
// PollInterval. Every held claim is refreshed every HeartbeatInterval.
// Handler verdicts become commits fenced on the claim token and checkpoint
// sequence, so a holder that lost its claim (stolen after ClaimTTL, revoked
// by MutateRun) changes nothing, and a run whose worker died is stolen by
// another worker after ClaimTTL and committed exactly once.
//
// Claim refusals for lock contention back off briefly with jitter; other
// errors, including a database restart, are logged and retried with
// exponential backoff. Neither ends Run. WorkerConfig.OnEvent, when set,
// hears of each listen, claim call, handler start and verdict as it happens.
// With WorkerConfig.Retention set, the worker also deletes finished runs
// periodically; with WorkerConfig.Schedules, it takes due schedule ticks.
type Worker struct {
	client *Client
	cfg    WorkerConfig
	logger *slog.Logger
	// handler is WorkerConfig.Handler wrapped in WorkerConfig.Middleware;
	// nil with Handlers.
	handler Handler
	// completer writes the verdicts of jobs that finish together in one
	// statement.
	completer *verdictCompleter
	// ahead decides how many runs the worker holds beyond its handlers.
	ahead *claimAhead
	// scheduleClock is the schedule taker's clock: the wall clock, or a
	// test's (NewTestWorker).
	scheduleClock ScheduleClock

	// slots are the worker's places for its jobs.
	slots *slots
	// dueNoted receives a value, if none is pending, when a verdict made a
	// run due at a time the poll loop's timer should wake for (see
	// noteDue).
	dueNoted chan struct{}
	// stopRequested is closed by the first Stop.
	stopRequested chan struct{}
	// done is closed when Run returns.
	done chan struct{}
	// preferExpired is the class preference of the next demand-one poll;
	// only the poll loop touches it.
	preferExpired bool
	// filled says the latest claim call leased as many runs as it asked
	// for: more work is due than the worker has slots, so a verdict that
	// waits for a shared statement holds back no run the worker could
	// start instead. Otherwise verdicts are written at once
	// (jobSeam.CommitGrouped), and a call that came back short ends the
	// wait of those already waiting.
	filled atomic.Bool

	mu       sync.Mutex
	started  bool
	stopping bool
	// stopCtx bounds the graceful drain; nil until Stop is called.
	stopCtx context.Context
	// handedBack and handBackFailures tally the claims the worker handed
	// back, at its stop or for a held run whose handler could not start,
	// for Run's result.
	handedBack       int
	handBackFailures []error
	// dues are the times, earliest first, at which runs this worker released
	// become due before its next poll; the poll loop wakes at the earliest
	// (see noteDue).
	dues []time.Time
	// runErr is Run's result, readable once done is closed.
	runErr error
}

// NewWorker validates cfg (ErrInvalidConfig) and returns a worker of client
// that is not yet running; start it with Run.
func NewWorker(client *Client, cfg WorkerConfig) (*Worker, error) {
	return NewTestWorker(client, cfg, WorkerTestConfig{})
}

// WorkerTestConfig holds what only tests of a Worker set: NewTestWorker
// takes it beside the WorkerConfig. The zero value is NewWorker's.
type WorkerTestConfig struct {
	// ScheduleClock is the clock the schedule taker reads and waits on
	// (WorkerConfig.Schedules); nil is the wall clock. Tests advance a
	// clock of their own instead of waiting for real ticks.
	ScheduleClock ScheduleClock
}

// NewTestWorker is NewWorker with test's hooks; production code calls
// NewWorker.
func NewTestWorker(client *Client, cfg WorkerConfig, test WorkerTestConfig) (*Worker, error) {
	resolved, err := cfg.resolve(client)
	if err != nil {
		return nil, err
	}
	clock := test.ScheduleClock
	if clock == nil {
		clock = wallClock{}
	}
	var handler Handler
	if resolved.Handler != nil {
		handler = chain(resolved.Middleware, resolved.Handler)
	}
	stop := make(chan struct{})
	ahead := newClaimAhead(resolved)
	return &Worker{
		client:        client,
		completer:     newCompleter(client, resolved, ahead.claimTime),
		cfg:           resolved,
		logger:        resolved.Logger,
		handler:       handler,
		ahead:         ahead,
		scheduleClock: clock,
		dueNoted:      make(chan struct{}, 1),
		stopRequested: stop,
		done:          make(chan struct{}),
		slots:         newSlots(resolved, stop),
	}, nil
}

// Run claims and handles runs until ctx ends or Stop is called, then stops
// (see Stop) and returns. When ctx ends first, the stop is immediate:
// handlers are cancelled at once and their claims handed back. Run returns
// an error only when some claim could not be handed back (it then expires
// after ClaimTTL and is stolen, so no run is lost) or when called twice
// (ErrWorkerStarted). A worker runs once.
func (w *Worker) Run(ctx context.Context) error {
	w.mu.Lock()
	if w.started {
		w.mu.Unlock()
		return ErrWorkerStarted
	}
	w.started = true
	stopping := w.stopping
	w.mu.Unlock()
	defer close(w.done)
	if stopping {
		return nil
	}

	// io carries the worker's own database calls: they must be able to
	// finish, and to hand claims back, after ctx ends.
	io := context.WithoutCancel(ctx)
	handlers, cancelHandlers := context.WithCancelCause(ctx)
	defer cancelHandlers(ErrWorkerStopped)
	listenCtx, stopListening := context.WithCancel(ctx)
	wake := make(chan struct{}, 1)
	scheduleWake := make(chan struct{}, 1)
	services := []startstop.Service{startstop.NewFunc(func(ctx context.Context) {
		w.listen(ctx, wake, scheduleWake)
	})}
	// The cleaner and the schedule taker stop with the listener: when the
	// worker stops claiming.
	if !w.cfg.Retention.Off {
		services = append(services, w.retentionCleaner())
	}
	if w.cfg.Schedules {
		services = append(services, w.scheduleTaker(scheduleWake))
	}
	for _, s := range services {
		_ = s.Start(listenCtx) // a new service is never refused
	}

	w.logger.InfoContext(ctx, "docket worker started",
		"policy", w.client.engine.Name(),
		"concurrency", w.cfg.Concurrency,
		"claim_ahead", w.cfg.Tuning.ClaimAhead,
		"poll_interval", w.cfg.PollInterval,
		"claim_ttl", w.cfg.ClaimTTL,
		"heartbeat_interval", w.cfg.HeartbeatInterval)
	w.poll(ctx, io, handlers, wake)
	// Nothing more is claimed: verdicts waiting for a batch are written now.
	w.completer.Hurry()
	stopListening()
	for _, s := range services {
		s.Stop()
	}
	w.runErr = w.drain(ctx, io, cancelHandlers)
	return w.runErr
}

// Stop stops the worker gracefully: it claims nothing more, lets running
// handlers finish until ctx ends, then cancels the rest (their context's
// cause is ErrWorkerStopped) and hands their claims back with a
// ReleaseImmediate commit that keeps the admission, so each such run is due
// at once for the next worker and none stays claimed. A cancelled handler's
// verdict is dropped; one that ignores its context may still be running when
// Stop returns, but nothing it does is committed. Stop waits for Run to
// return and returns its error; on a worker that never ran it only prevents
// Run from starting.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	if !w.stopping {
		w.stopping = true
		w.stopCtx = ctx
		close(w.stopRequested)
	}
	started := w.started
	w.mu.Unlock()
	if !started {
		return nil
	}
	<-w.done
	return w.runErr
}

// announceYield wakes the domain's workers, this one included, after runs
// were handed back due now.
func (w *Worker) announceYield(io context.Context) {
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	defer cancel()
	w.client.announceDue(ctx, w.client.queries, time.Time{})
}

// drain finishes a stopping worker. After Stop it lets in-flight handlers
// finish until Stop's context ends (when ctx ended instead, it does not
// wait); then it cancels the remaining handlers and hands their claims back
// with the admission kept. It returns the failed hand-backs; those claims
// expire after ClaimTTL and are stolen, so no run is lost.
func (w *Worker) drain(ctx, io context.Context, cancelHandlers context.CancelCauseFunc) error {
	w.mu.Lock()
	stopCtx := w.stopCtx
	w.mu.Unlock()
	w.logger.InfoContext(io, "docket worker stopping", "in_flight", len(w.slots.inFlight()))
	if stopCtx != nil && ctx.Err() == nil {
		w.slots.awaitIdle(ctx, stopCtx)
	}
	// Surrender first, so a handler that returns once cancelled cannot
	// commit its verdict ahead of the hand-back.
	var surrendered []*Job
	for _, j := range w.slots.inFlight() {
		if j.exec.Surrender() {
			surrendered = append(surrendered, j)
		}
	}
	cancelHandlers(ErrWorkerStopped)

	var wg sync.WaitGroup
	for _, j := range surrendered {
		wg.Go(func() { j.exec.HandBack(io) })
	}
	wg.Wait()
	// A job that had not started its handler hands its claim back itself
	// (executor.Job.Run); with the handlers' contexts ended, none waits any
	// more.
	w.slots.awaitBegun()
	w.mu.Lock()
	yielded, failures := w.handedBack, w.handBackFailures
	w.mu.Unlock()
	if yielded > 0 {
		w.announceYield(io)
	}
	w.logger.InfoContext(io, "docket worker stopped", "handed_back", yielded, "hand_back_failures", len(failures))
	if len(failures) > 0 {
		return fmt.Errorf("docket: worker stop: %d claims could not be handed back and will expire: %w",
			len(failures), errors.Join(failures...))
	}
	return nil
}

// handedBackClaim tallies the hand-back of j's claim for Run's result:
// released says the store accepted it, err is its failure; a claim it could
// not give back expires after ClaimTTL.
func (w *Worker) handedBackClaim(io context.Context, j *Job, released bool, err error) {
	if err != nil {
		w.failure(io, "docket worker could not hand a claim back; it will expire", j.RunID, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if released {
		w.handedBack++
	}
	if err != nil {
		w.handBackFailures = append(w.handBackFailures, err)
	}
}

// listenCloseTimeout bounds the close of a listener connection whose
// channel could not be read.
const listenCloseTimeout = time.Second

// listen keeps a LISTEN session on the domain's due-run channel on a
// connection of its own and signals every channel of wakes for every
// notification, reconnecting with backoff after any error, until ctx ends
// (see package notifier).
func (w *Worker) listen(ctx context.Context, wakes ...chan<- struct{}) {
	l := &notifier.Listener{
		Connect:   w.listenConn,
		Wakes:     wakes,
		WaitBound: w.cfg.PollInterval,
		Backoff:   errorBackoff,
		OnListen: func() {
			w.logger.DebugContext(ctx, "docket worker listening for due runs")
			w.emit(WorkerEvent{Kind: EventListening})
		},
		OnError: func(err error, retryIn time.Duration) {
			w.logger.WarnContext(ctx, "docket worker listener failed; reconnecting",
				"error", fmt.Errorf("docket: worker %w", err).Error(), "retry_in", retryIn)
		},
		OnPayload: func(payload string) { w.revoked(ctx, payload) },
	}
	l.Run(ctx)
}

// revoked ends the handler of the job whose claim a NotifyClaimRevoked
// payload ("revoked TOKEN STATUS") names, if this worker holds it: with a
// cause matching ErrRunCancelled when the run was cancelled, else
// ErrClaimLost. Any other payload is not for it.
func (w *Worker) revoked(ctx context.Context, payload string) {
	fields := strings.Fields(payload)
	if len(fields) != 3 || fields[0] != "revoked" {
		return
	}
	token, err := uuid.Parse(fields[1])
	if err != nil {
		return
	}
	for _, j := range w.slots.inFlight() {
		if j.holder.Token != token {
			continue
		}
		w.debug(ctx, "docket worker claim revoked; cancelling its handler", j.RunID, "status", fields[2])
		j.exec.Cancel(revocationCause(RunStatus(fields[2])))
	}
}

// errRevokedCancelled is the cause a handler's context ends with when its
// run was cancelled by an operator.
var errRevokedCancelled = revocationCause(StatusCancelled)

// revocationCause is the cause a handler's context ends with when an
// operator's write revoked its claim and left the run in status.
func revocationCause(status RunStatus) error {
	if status == StatusCancelled {
		return fmt.Errorf("%w by an operator", ErrRunCancelled)
	}
	return fmt.Errorf("%w: an operator's write made the run %s", ErrClaimLost, status)
}

// listenConn opens the connection of the worker's LISTEN session, a direct
// one to ListenURL or else one taken out of the pool for good, and reads
// the domain's due-run channel on it.
func (w *Worker) listenConn(ctx context.Context) (notifier.Conn, string, error) {
	var conn *pgx.Conn
	if w.cfg.ListenURL != "" {
		direct, err := pgx.Connect(ctx, w.cfg.ListenURL)
		if err != nil {
			return nil, "", fmt.Errorf("connecting to ListenURL: %w", err)
		}
		conn = direct
	} else {
		pooled, err := w.client.pool.Acquire(ctx)
		if err != nil {
			return nil, "", err
		}
		conn = pooled.Hijack()
	}
	channel, err := dbgen.New(w.client.scopedOn(conn, false)).RunsDueChannel(ctx)
	if err != nil {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
		defer cancel()
		_ = conn.Close(closeCtx) // the session never started
		return nil, "", fmt.Errorf("reading the due-run channel: %w", err)
	}
	return conn, channel, nil
}

// leaseRead is what one claim call read of the runs it leased, shared by
// their jobs: the claim and the read are one batch (Client.claimDueRead).
type leaseRead struct {
	runs map[string]dbgen.LeasedRunsRow

	// cohort is the call's jobs in the worker's completer.
	cohort jobcompleter.Cohort
}

package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ErrNoHandler is the error of a handler attempt whose run's graph id has no
// handler in the Worker's Handlers. The attempt fails like a Fail verdict
// under WorkerConfig.Retry, and the run's error history records it with kind
// "error" and the text `no handler registered for graph "<graph id>"`.
var ErrNoHandler = errors.New("no handler registered")

// TypedHandler runs one claimed run of a graph whose state is a T: state is
// Job.State decoded with encoding/json into a fresh T. Everything Handler
// says holds for it too: it returns the run's verdict, its context ends when
// the claim is lost or the worker stops, and a panic is a failed attempt.
type TypedHandler[T any] func(ctx context.Context, job *Job, state T) Result

// Handlers routes each claimed run to the TypedHandler registered for its
// graph id, in the spirit of an HTTP request multiplexer. Give it to a
// Worker as WorkerConfig.Handlers instead of a Handler that switches on
// Job.GraphID. Register adds a graph's handler; a Handlers is safe for
// concurrent use, and a graph registered while a Worker runs is routed from
// its next claim on. The zero Handlers is empty and ready to use.
//
// A run whose graph id has no handler fails its attempt with ErrNoHandler,
// and a run whose state does not decode into the registered type fails its
// attempt with the decode error; both follow the retry policy that applies
// to the run (the graph's HandlerRetry, else WorkerConfig.Retry), and both
// are recorded in the run's error history with kind "error".
type Handlers struct {
	mu      sync.RWMutex
	byGraph map[string]graphRoute
}

// NewHandlers returns an empty Handlers.
func NewHandlers() *Handlers { return &Handlers{} }

// HandlerOption tunes how a Worker runs one graph's handler; pass it to
// Register.
type HandlerOption func(*handlerOptions)

// handlerOptions are the options of one registered graph.
type handlerOptions struct {
	timeout    time.Duration
	retry      *RetryPolicy
	middleware []Middleware
}

// HandlerTimeout makes d, instead of WorkerConfig.HandlerTimeout, the
// timeout of each call of the graph's handler (see WorkerConfig.HandlerTimeout
// for what a timeout does); NoHandlerTimeout sets none. Zero, the default,
// keeps the Worker's; any other negative d is refused by Register.
func HandlerTimeout(d time.Duration) HandlerOption {
	return func(o *handlerOptions) { o.timeout = d }
}

// HandlerMiddleware wraps the graph's handler in mw, after the Worker's
// WorkerConfig.Middleware: the first of mw is the outermost of the graph's
// own, and the typed handler, its state decoded, is the innermost. Several
// HandlerMiddleware options append in order. A nil middleware is refused by
// Register.
func HandlerMiddleware(mw ...Middleware) HandlerOption {
	return func(o *handlerOptions) { o.middleware = append(o.middleware, mw...) }
}

// HandlerRetry makes p, instead of WorkerConfig.Retry, the policy for the
// failed attempts of the graph's runs (see RetryPolicy), the attempts whose
// state did not decode included. Its zero fields take RetryPolicy's
// defaults, not the Worker's policy's values. An invalid p is a
// *RetryPolicyError naming the graph, from Register.
func HandlerRetry(p RetryPolicy) HandlerOption {
	return func(o *handlerOptions) { o.retry = &p }
}

// graphRoute is one registered graph: its handler, which decodes the state,
// wrapped in its own middleware, and its timeout and retry policy
// overrides, if any.
type graphRoute struct {
	handle  Handler
	timeout time.Duration
	retry   *RetryPolicy
}

// Register adds handler as the handler of graphID's runs in h, with opts.
// An empty graphID, a nil h, handler, option or middleware, a graphID that
// already has a handler in h, a negative HandlerTimeout other than
// NoHandlerTimeout or an invalid HandlerRetry is an error matching
// ErrInvalidConfig, and h is left as it was.
func Register[T any](h *Handlers, graphID string, handler TypedHandler[T], opts ...HandlerOption) error {
	switch {
	case h == nil:
		return invalidConfig("Register needs a Handlers")
	case graphID == "":
		return invalidConfig("Register needs a graph id")
	case handler == nil:
		return invalidConfig("the handler of graph %s is nil", quoteID(graphID))
	}
	var o handlerOptions
	for _, opt := range opts {
		if opt == nil {
			return invalidConfig("a handler option of graph %s is nil", quoteID(graphID))
		}
		opt(&o)
	}
	if o.timeout < 0 && o.timeout != NoHandlerTimeout {
		return invalidConfig("the handler timeout of graph %s is negative (%v)", quoteID(graphID), o.timeout)
	}
	if slices.ContainsFunc(o.middleware, isNilMiddleware) {
		return invalidConfig("a handler middleware of graph %s is nil", quoteID(graphID))
	}
	r := graphRoute{handle: chain(o.middleware, typedHandle(graphID, handler)), timeout: o.timeout}
	if o.retry != nil {
		retry, err := o.retry.resolve()
		if err != nil {
			var refused *RetryPolicyError
			if errors.As(err, &refused) {
				refused.GraphID = graphID
			}
			return err
		}
		r.retry = &retry
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, taken := h.byGraph[graphID]; taken {
		return invalidConfig("graph %s already has a handler", quoteID(graphID))
	}
	if h.byGraph == nil {
		h.byGraph = make(map[string]graphRoute)
	}
	h.byGraph[graphID] = r
	return nil
}

// Middleware wraps a Handler: it returns a Handler that runs code of its
// own around next, the rest of the chain, seeing the Job before the call
// and the Result after it, and may return another Result. It must call
// next at most once, on the calling goroutine, with the context it was
// given or one derived from it. WorkerConfig.Middleware applies to every
// run of a Worker, HandlerMiddleware to one graph's; a panic in a
// middleware is recovered and recorded like a handler's.
type Middleware func(next Handler) Handler

// isNilMiddleware reports a nil Middleware, which the configs refuse.
func isNilMiddleware(m Middleware) bool { return m == nil }

// chain wraps handle in mw, the first of mw outermost.
func chain(mw []Middleware, handle Handler) Handler {
	for _, m := range slices.Backward(mw) {
		handle = m(handle)
	}
	return handle
}

// route is how a Worker handles one job: the handler it calls, wrapped in
// every middleware that applies, its timeout (0 for none) and the resolved
// retry policy the verdict plans of the attempt follow.
type route struct {
	handle  Handler
	timeout time.Duration
	retry   RetryPolicy
}

// routeOf is the route of the runs of graphID: WorkerConfig.Handler under
// WorkerConfig.HandlerTimeout and WorkerConfig.Retry, or the graph's entry
// in WorkerConfig.Handlers under its HandlerTimeout and HandlerRetry, where
// it set them, else the Worker's. A graph without an entry gets a handler
// that fails each attempt with ErrNoHandler. WorkerConfig.Middleware wraps
// every handler.
func (w *Worker) routeOf(graphID string) route {
	r := route{timeout: w.cfg.HandlerTimeout, retry: w.cfg.Retry}
	if w.cfg.Handlers == nil {
		r.handle = w.handler
		return r
	}
	w.cfg.Handlers.mu.RLock()
	graph, ok := w.cfg.Handlers.byGraph[graphID]
	w.cfg.Handlers.mu.RUnlock()
	if !ok {
		r.handle = chain(w.cfg.Middleware, noHandler(graphID))
		return r
	}
	r.handle = chain(w.cfg.Middleware, graph.handle)
	if graph.timeout != 0 {
		r.timeout = max(graph.timeout, 0)
	}
	if graph.retry != nil {
		r.retry = *graph.retry
	}
	return r
}

// TypedCheckpoint is Job.Checkpoint of state encoded with encoding/json: it
// stores step and state and keeps the claim. A state that does not encode
// is an error matching ErrInvalidArgument, and nothing is stored.
func TypedCheckpoint[T any](ctx context.Context, job *Job, step int, state T) error {
	raw, err := json.Marshal(state)
	if err != nil {
		return invalidArgument("encode the checkpoint state of run %s: %w", quoteID(job.RunID), err)
	}
	return job.Checkpoint(ctx, step, raw)
}

// TypedComplete is Complete with state encoded with encoding/json. A state
// that does not encode fails the run at once (FailNow) with the encoding
// error, since no retry can encode it.
func TypedComplete[T any](state T) Result {
	raw, err := json.Marshal(state)
	if err != nil {
		return FailNow(fmt.Errorf("encode the completed state: %w", err))
	}
	return Complete(raw)
}

// TypedContinue is Continue with state encoded with encoding/json. A state
// that does not encode fails the run at once (FailNow) with the encoding
// error, since no retry can encode it.
func TypedContinue[T any](step int, state T) Result {
	raw, err := json.Marshal(state)
	if err != nil {
		return FailNow(fmt.Errorf("encode the continued state: %w", err))
	}
	return Continue(step, raw)
}

// NewTypedRun returns run with its State set to state encoded with
// encoding/json, ready for InsertRun or InsertRunTx. A state that does not
// encode is an error matching ErrInvalidArgument.
func NewTypedRun[T any](run NewRun, state T) (NewRun, error) {
	raw, err := json.Marshal(state)
	if err != nil {
		return run, invalidArgument("encode the state of a %s run: %w", quoteID(run.GraphID), err)
	}
	run.State = raw
	return run, nil
}

// ListDomains returns the schemas of pool's database that hold a Docket
// domain, sorted by name: the queues an app opens with Config.Schema (one
// Client each) and an operator addresses with --schema. It reads the catalog
// alone, on any search_path, and writes nothing.
func ListDomains(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	if pool == nil {
		return nil, invalidArgument("nil pool")
	}
	domains, err := dbgen.New(pool).ListDomains(ctx)
	if err != nil {
		return nil, fmt.Errorf("docket: listing domains: %w", err)
	}
	return domains, nil
}

// Queues runs the Workers of several queues of one process as one: each
// queue is a fairness domain (its own schema, Client, ring, cursor, default
// cap and overrides), each Worker keeps its own concurrency, handlers and
// retry policy, and the Clients may share one pool, logger and tracer. Run
// starts them together and Stop stops and drains them together. A run
// inserted in one queue is claimed only by that queue's Workers.
type Queues struct {
	workers []*Worker
}

// NewQueues groups workers, each not yet running. It refuses no worker, a
// nil one and one given twice with ErrInvalidConfig.
func NewQueues(workers ...*Worker) (*Queues, error) {
	if len(workers) == 0 {
		return nil, invalidConfig("queues: no worker")
	}
	seen := make(map[*Worker]bool, len(workers))
	for i, w := range workers {
		switch {
		case w == nil:
			return nil, invalidConfig("queues: worker at index %d is nil", i)
		case seen[w]:
			return nil, invalidConfig("queues: worker at index %d is given twice", i)
		}
		seen[w] = true
	}
	return &Queues{workers: append([]*Worker(nil), workers...)}, nil
}

// Run runs every worker until ctx ends or Stop is called, and returns when
// all of them have returned, with their errors joined (see Worker.Run).
func (q *Queues) Run(ctx context.Context) error {
	return q.each(func(w *Worker) error { return w.Run(ctx) })
}

// Stop stops every worker at once and waits for all of them to drain (see
// Worker.Stop: running handlers finish until ctx ends, the rest are
// cancelled and handed back); it returns their errors joined.
func (q *Queues) Stop(ctx context.Context) error {
	return q.each(func(w *Worker) error { return w.Stop(ctx) })
}

// each calls fn for every worker concurrently and joins the errors.
func (q *Queues) each(fn func(*Worker) error) error {
	errs := make([]error, len(q.workers))
	var wg sync.WaitGroup
	for i, w := range q.workers {
		wg.Go(func() { errs[i] = fn(w) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

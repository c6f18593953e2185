package docket

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"
)

type invoiceState struct {
	Invoice int `json:"invoice"`
}

func completeInvoice(context.Context, *Job, invoiceState) Result { return Complete(nil) }

func TestRegisterRefusesWithTypedErrors(t *testing.T) {
	h := NewHandlers()
	if err := Register(h, "send-invoice", completeInvoice); err != nil {
		t.Fatalf("first registration: %v", err)
	}
	cases := map[string]struct {
		err  error
		want string
	}{
		"nil registry": {Register[invoiceState](nil, "x", completeInvoice),
			`docket: invalid config: Register needs a Handlers`},
		"empty graph id": {Register(h, "", completeInvoice),
			`docket: invalid config: Register needs a graph id`},
		"nil handler": {Register[invoiceState](h, "x", nil),
			`docket: invalid config: the handler of graph "x" is nil`},
		"nil option": {Register(h, "x", completeInvoice, nil),
			`docket: invalid config: a handler option of graph "x" is nil`},
		"twice": {Register(h, "send-invoice", completeInvoice),
			`docket: invalid config: graph "send-invoice" already has a handler`},
		"twice with another type": {Register(h, "send-invoice", func(context.Context, *Job, string) Result { return Yield() }),
			`docket: invalid config: graph "send-invoice" already has a handler`},
		"negative timeout": {Register(h, "x", completeInvoice, HandlerTimeout(-time.Second)),
			`docket: invalid config: the handler timeout of graph "x" is negative (-1s)`},
		"invalid retry": {Register(h, "x", completeInvoice, HandlerRetry(RetryPolicy{MaxAttempts: -1})),
			`docket: invalid config: HandlerRetry of graph "x": MaxAttempts -1 is outside 1..2147483647`},
	}
	for name, c := range cases {
		if !errors.Is(c.err, ErrInvalidConfig) || c.err.Error() != c.want {
			t.Errorf("%s: %v, want %q matching ErrInvalidConfig", name, c.err, c.want)
		}
	}
	var refused *RetryPolicyError
	if err := Register(h, "x", completeInvoice, HandlerRetry(RetryPolicy{Jitter: 2})); !errors.As(err, &refused) ||
		*refused != (RetryPolicyError{Field: "Jitter", Reason: "2 is outside 0..1", GraphID: "x"}) {
		t.Errorf("invalid retry: %#v, want a *RetryPolicyError of graph x", err)
	}
	if len(h.byGraph) != 1 {
		t.Fatalf("refused registrations changed the registry: %d graphs", len(h.byGraph))
	}
	// A refused registration leaves the id free.
	if err := Register(h, "x", completeInvoice, HandlerTimeout(time.Second)); err != nil {
		t.Fatalf("x after refusals: %v", err)
	}
}

func TestWorkerNeedsExactlyOneOfHandlerAndHandlers(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	handler := func(context.Context, *Job) Result { return Complete(nil) }
	cases := map[string]struct {
		cfg  WorkerConfig
		want string
	}{
		"neither": {WorkerConfig{Concurrency: 1}, `docket: invalid config: worker needs a Handler or Handlers`},
		"both": {WorkerConfig{Concurrency: 1, Handler: handler, Handlers: NewHandlers()},
			`docket: invalid config: worker takes a Handler or Handlers, not both`},
	}
	for name, c := range cases {
		if _, err := NewWorker(client, c.cfg); !errors.Is(err, ErrInvalidConfig) || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handlers: NewHandlers()}); err != nil {
		t.Fatalf("Handlers alone: %v", err)
	}
}

// Each graph's route carries its own handler and its HandlerRetry, resolved,
// or the Worker's policy; an unregistered graph's handler fails with
// ErrNoHandler and a state of the wrong shape with the decode error.
func TestWorkerRoutesByGraph(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	h := &Handlers{}
	var got invoiceState
	if err := Register(h, "send-invoice", func(_ context.Context, _ *Job, s invoiceState) Result {
		got = s
		return TypedComplete(s)
	}, HandlerRetry(RetryPolicy{MaxAttempts: 3})); err != nil {
		t.Fatal(err)
	}
	if err := Register(h, "plain", func(context.Context, *Job, []int) Result { return Yield() }); err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handlers: h, Retry: RetryPolicy{MaxAttempts: 7}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	r := w.routeOf("send-invoice")
	if r.retry.MaxAttempts != 3 || r.retry.Backoff != DefaultRetryBackoff || r.retry.Multiplier != DefaultRetryMultiplier {
		t.Errorf("send-invoice retry %+v, want its own policy with the defaults", r.retry)
	}
	result := r.handle(ctx, &Job{GraphID: "send-invoice", State: json.RawMessage(`{"invoice": 42}`)})
	if got != (invoiceState{42}) || result.kind != resultComplete || string(result.state) != `{"invoice":42}` {
		t.Errorf("send-invoice got %+v and returned %+v", got, result)
	}
	result = r.handle(ctx, &Job{GraphID: "send-invoice", State: json.RawMessage(`{"invoice": "x"}`)})
	var typeErr *json.UnmarshalTypeError
	if result.kind != resultFail || !errors.As(result.err, &typeErr) || result.err.Error() !=
		`decode the state of graph "send-invoice" into docket.invoiceState: `+typeErr.Error() {
		t.Errorf("bad state: %+v", result)
	}

	if r := w.routeOf("plain"); r.retry.MaxAttempts != 7 || r.handle(ctx, &Job{State: json.RawMessage(`[1]`)}).kind != resultYield {
		t.Errorf("plain route %+v, want the Worker's policy and a yield", r.retry)
	}
	r = w.routeOf("unknown")
	result = r.handle(ctx, &Job{GraphID: "unknown"})
	if r.retry.MaxAttempts != 7 || result.kind != resultFail || !errors.Is(result.err, ErrNoHandler) ||
		result.err.Error() != `no handler registered for graph "unknown"` {
		t.Errorf("unknown graph: retry %+v, result %+v", r.retry, result)
	}
}

// A route carries the graph's HandlerTimeout, else the Worker's
// HandlerTimeout (DefaultHandlerTimeout when zero); NoHandlerTimeout, from
// either, is none (0). The typed handler itself sets no deadline: the job
// applies the route's timeout around the whole middleware chain.
func TestRouteTimeouts(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	h := NewHandlers()
	var deadline bool
	handler := func(ctx context.Context, _ *Job, _ struct{}) Result {
		_, deadline = ctx.Deadline()
		return Complete(nil)
	}
	for graph, opts := range map[string][]HandlerOption{
		"slow":  {HandlerTimeout(time.Millisecond)},
		"plain": nil,
		"none":  {HandlerTimeout(NoHandlerTimeout)},
	} {
		if err := Register(h, graph, handler, opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := Register(h, "bad", handler, HandlerTimeout(-2)); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("a timeout of -2ns: %v, want ErrInvalidConfig", err)
	}
	for _, c := range []struct {
		worker time.Duration
		want   map[string]time.Duration
	}{
		{0, map[string]time.Duration{"slow": time.Millisecond, "plain": DefaultHandlerTimeout, "none": 0}},
		{time.Hour, map[string]time.Duration{"slow": time.Millisecond, "plain": time.Hour, "none": 0}},
		{NoHandlerTimeout, map[string]time.Duration{"slow": time.Millisecond, "plain": 0, "none": 0}},
	} {
		w, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handlers: h, HandlerTimeout: c.worker})
		if err != nil {
			t.Fatal(err)
		}
		for graph, want := range c.want {
			r := w.routeOf(graph)
			if got := max(r.timeout, 0); got != want {
				t.Errorf("worker timeout %v: graph %s has timeout %v, want %v", c.worker, graph, got, want)
			}
			if r.handle(context.Background(), &Job{State: json.RawMessage(`{}`)}); deadline {
				t.Errorf("graph %s: the typed handler set a deadline of its own", graph)
			}
		}
	}
	handle := func(context.Context, *Job) Result { return Complete(nil) }
	for name, cfg := range map[string]WorkerConfig{
		"negative timeout": {Concurrency: 1, Handler: handle, HandlerTimeout: -time.Second},
		"nil middleware":   {Concurrency: 1, Handler: handle, Middleware: []Middleware{nil}},
	} {
		if _, err := NewWorker(client, cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	if err := Register(h, "nil-mw", handler, HandlerMiddleware(nil)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a nil HandlerMiddleware: %v, want ErrInvalidConfig", err)
	}
}

// The middleware chain: the Worker's in order, outermost first, then the
// graph's, then the typed handler; each sees the Job on the way in and the
// Result on the way out, and may replace it. A plain Handler goes through
// the Worker's.
func TestMiddlewareChainOrder(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	var calls []string
	tag := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, job *Job) Result {
				calls = append(calls, name+" in "+job.RunID)
				r := next(ctx, job)
				calls = append(calls, name+" out "+r.Kind())
				return r
			}
		}
	}
	failToYield := func(next Handler) Handler {
		return func(ctx context.Context, job *Job) Result {
			if r := next(ctx, job); r.kind == resultFail {
				return Yield()
			}
			return Complete(nil)
		}
	}
	h := NewHandlers()
	if err := Register(h, "g", func(_ context.Context, job *Job, _ struct{}) Result {
		calls = append(calls, "handler "+job.RunID)
		return Fail(errors.New("x"))
	}, HandlerMiddleware(tag("graph1")), HandlerMiddleware(tag("graph2"), failToYield)); err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handlers: h, Middleware: []Middleware{tag("worker1"), tag("worker2")}})
	if err != nil {
		t.Fatal(err)
	}
	result := w.routeOf("g").handle(context.Background(), &Job{RunID: "r1", State: json.RawMessage(`{}`)})
	want := []string{"worker1 in r1", "worker2 in r1", "graph1 in r1", "graph2 in r1", "handler r1",
		"graph2 out yield", "graph1 out yield", "worker2 out yield", "worker1 out yield"}
	if result.kind != resultYield || !slices.Equal(calls, want) {
		t.Fatalf("result %+v, calls %q; want a yield and %q", result, calls, want)
	}

	calls = nil
	w, err = NewWorker(client, WorkerConfig{Concurrency: 1, Middleware: []Middleware{tag("worker1")},
		Handler: func(_ context.Context, job *Job) Result {
			calls = append(calls, "handler "+job.RunID)
			return Snooze(time.Second)
		}})
	if err != nil {
		t.Fatal(err)
	}
	result = w.routeOf("any").handle(context.Background(), &Job{RunID: "r2"})
	if want := []string{"worker1 in r2", "handler r2", "worker1 out snooze"}; result.kind != resultSnooze || !slices.Equal(calls, want) {
		t.Fatalf("plain handler: result %+v, calls %q; want a snooze and %q", result, calls, want)
	}
}

func TestTypedHelpersEncode(t *testing.T) {
	run, err := NewTypedRun(NewRun{RunID: "r", GraphID: "g"}, invoiceState{42})
	if err != nil || run.RunID != "r" || string(run.State) != `{"invoice":42}` {
		t.Errorf("NewTypedRun: %+v, %v", run, err)
	}
	if _, err := NewTypedRun(NewRun{GraphID: "g"}, math.Inf(1)); !errors.Is(err, ErrInvalidArgument) ||
		err.Error() != `docket: invalid argument: encode the state of a "g" run: json: unsupported value: +Inf` {
		t.Errorf("NewTypedRun of +Inf: %v", err)
	}
	if err := TypedCheckpoint(context.Background(), &Job{RunID: "r"}, 1, math.NaN()); !errors.Is(err, ErrInvalidArgument) ||
		err.Error() != `docket: invalid argument: encode the checkpoint state of run "r": json: unsupported value: NaN` {
		t.Errorf("TypedCheckpoint of NaN: %v", err)
	}
	if r := TypedContinue(3, []string{"a"}); r.kind != resultContinue || r.step != 3 || string(r.state) != `["a"]` {
		t.Errorf("TypedContinue: %+v", r)
	}
	for name, r := range map[string]Result{"complete": TypedComplete(math.NaN()), "continue": TypedContinue(1, math.NaN())} {
		if r.kind != resultFailNow || r.err == nil || r.err.Error() != "encode the "+name+"d state: json: unsupported value: NaN" {
			t.Errorf("%s of NaN: %+v", name, r)
		}
	}
}

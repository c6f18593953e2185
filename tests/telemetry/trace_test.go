package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// traceEnv is a client whose spans go to a recorder, and the app's own tracer
// on the same provider.
type traceEnv struct {
	t        *testing.T
	ctx      context.Context
	pool     *pgxpool.Pool
	client   *docket.Client
	recorder *tracetest.SpanRecorder
	app      trace.Tracer
}

// newTREnv opens a client with cfg on a fresh database; traced gives it
// the recorder's provider, otherwise only the app's tracer records.
func newTREnv(t *testing.T, cfg docket.Config, traced bool) *traceEnv {
	t.Helper()
	recorder := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	if traced {
		cfg.TracerProvider = tp
	}
	pool := testkit.NewPool(t)
	return &traceEnv{t: t, ctx: testkit.Context(t), pool: pool, client: testkit.OpenClient(t, pool, cfg), recorder: recorder, app: tp.Tracer("app")}
}

// insert inserts one due run of scope in ctx.
func (e *traceEnv) insert(ctx context.Context, scope docket.Scope, runID string) {
	e.t.Helper()
	if _, err := e.client.InsertRun(ctx, docket.NewRun{RunID: runID, Scope: scope, GraphID: "tr-graph", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		e.t.Fatalf("insert %s: %v", runID, err)
	}
}

// stored returns the trace context runID stored: nil for SQL NULL.
func (e *traceEnv) stored(runID string) map[string]string {
	e.t.Helper()
	var doc []byte
	if err := e.pool.QueryRow(e.ctx, `select trace_context from docket_runs where run_id = $1`, runID).Scan(&doc); err != nil {
		e.t.Fatalf("read trace_context of %s: %v", runID, err)
	}
	if doc == nil {
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(doc, &m); err != nil {
		e.t.Fatalf("trace_context of %s is %s: %v", runID, doc, err)
	}
	return m
}

// spans returns the ended spans named name.
func (e *traceEnv) spans(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range e.recorder.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// spanNames returns the names of every ended span.
func (e *traceEnv) spanNames() []string {
	var out []string
	for _, s := range e.recorder.Ended() {
		out = append(out, s.Name())
	}
	return out
}

// one returns the only span named name whose docket.run_id is runID.
func (e *traceEnv) one(name, runID string) sdktrace.ReadOnlySpan {
	e.t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range e.spans(name) {
		if attrs(s)["docket.run_id"] == runID {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("%d %s spans of run %s, want 1; spans: %v", len(found), name, runID, e.spanNames())
	}
	return found[0]
}

// attrs renders a span's attributes as strings.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// expectAttrs fails unless s has exactly the attributes want.
func expectAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrs(s)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s attributes:\n got  %v\n want %v", s.Name(), got, want)
	}
}

// traceparent is the W3C traceparent of sc.
func traceparent(sc trace.SpanContext) string {
	return fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags())
}

// remoteParent is a context whose span is a sampled remote parent with a
// tracestate, as an incoming request would carry.
func remoteParent(t *testing.T) context.Context {
	t.Helper()
	state, err := trace.ParseTraceState("vendor=abc")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
		TraceState: state,
		Remote:     true,
	})
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

// The whole path of one run: the app's request span inserts it, the insert
// span stores its context in the row, the Worker claims it (one docket.claim
// span per claim call), the handler span links to the stored context and is
// the span of the handler's context, and the commit span is its child.
func TestTraceInsertToCommit(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.TenantFairConfig(2), true)
	reqCtx, request := e.app.Start(remoteParent(t), "app.request")
	e.insert(reqCtx, docket.Tenant("tr-acme"), "tr-run-1")
	request.End()

	insert := e.one("docket.insert", "tr-run-1")
	if insert.Parent().SpanID() != request.SpanContext().SpanID() || insert.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("insert span parent %v kind %v, want the request span %v and producer", insert.Parent().SpanID(), insert.SpanKind(), request.SpanContext().SpanID())
	}
	expectAttrs(t, insert, map[string]string{
		"docket.runs.count": "1", "docket.run_id": "tr-run-1", "docket.tenant_id": "tr-acme", "docket.graph_id": "tr-graph"})
	stored := e.stored("tr-run-1")
	want := map[string]string{"traceparent": traceparent(insert.SpanContext()), "tracestate": "vendor=abc"}
	if fmt.Sprint(stored) != fmt.Sprint(want) {
		t.Fatalf("stored trace context %v, want the insert span's %v", stored, want)
	}

	events := testkit.NewWorkerEvents()
	handlerSpan := make(chan trace.SpanContext, 1)
	w, done := testkit.StartWorker(t, e.client, docket.WorkerConfig{
		Concurrency: 1,
		OnEvent:     events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			handlerSpan <- trace.SpanContextFromContext(ctx)
			return docket.Complete(json.RawMessage(`{"done": true}`))
		},
	})
	events.WaitWritten(t, "complete", "tr-run-1")
	testkit.StopWorker(t, w, done)

	handler := e.one("docket.handler", "tr-run-1")
	if got := <-handlerSpan; got.SpanID() != handler.SpanContext().SpanID() {
		t.Fatalf("the handler's context carries span %v, want the handler span %v", got.SpanID(), handler.SpanContext().SpanID())
	}
	if handler.Parent().IsValid() || handler.SpanKind() != trace.SpanKindConsumer {
		t.Fatalf("handler span parent %v kind %v, want a root consumer span", handler.Parent(), handler.SpanKind())
	}
	links := handler.Links()
	if len(links) != 1 || traceparent(links[0].SpanContext) != stored["traceparent"] ||
		links[0].SpanContext.TraceState().String() != "vendor=abc" {
		t.Fatalf("handler span links %+v, want one link to the stored %v", links, stored)
	}
	expectAttrs(t, handler, map[string]string{
		"docket.run_id": "tr-run-1", "docket.tenant_id": "tr-acme", "docket.graph_id": "tr-graph",
		"docket.step": "0", "docket.attempt": "1", "docket.verdict": "complete"})
	if handler.Status().Code != codes.Unset {
		t.Fatalf("handler span status %v, want unset", handler.Status())
	}

	commit := e.one("docket.commit", "tr-run-1")
	if commit.Parent().SpanID() != handler.SpanContext().SpanID() || commit.SpanContext().TraceID() != handler.SpanContext().TraceID() {
		t.Fatalf("commit span parent %v, want the handler span %v", commit.Parent().SpanID(), handler.SpanContext().SpanID())
	}
	expectAttrs(t, commit, map[string]string{
		"docket.run_id": "tr-run-1", "docket.verdict": "complete", "docket.commit.outcome": "written",
		"docket.commit.fenced": "false", "docket.commit.batch_size": "1"})

	// Only the claim call that leased the run records a span.
	claims := e.spans("docket.claim")
	leasing := testkit.WorkerCountEvents(events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventClaimed && ev.Leases > 0
	})
	if len(claims) != 1 || leasing != 1 {
		t.Fatalf("%d docket.claim spans for %d leasing claim calls, want 1 and 1", len(claims), leasing)
	}
	if c := claims[0]; c.SpanKind() != trace.SpanKindClient || c.Parent().IsValid() {
		t.Fatalf("claim span kind %v parent %v, want a root client span", c.SpanKind(), c.Parent())
	}
	expectAttrs(t, claims[0], map[string]string{"docket.claim.engine": "tenant_fair", "docket.claim.demand": "1",
		"docket.claim.outcomes": "1", "docket.claim.leases": "1", "docket.claim.poisoned": "0"})
}

// A handler that fails or panics ends its span with status Error and the
// error recorded; a fenced-out verdict is an answer, not an error.
func TestTraceFailedAndPanickingHandlers(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.TenantFairConfig(4), true)
	for _, id := range []string{"tr-fail", "tr-panic", "tr-zero", "tr-fail-nil"} {
		e.insert(e.ctx, docket.Tenant("tr-acme"), id)
	}
	events := testkit.NewWorkerEvents()
	w, done := testkit.StartWorker(t, e.client, docket.WorkerConfig{
		Concurrency: 4,
		OnEvent:     events.Hook,
		Retry:       docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch job.RunID {
			case "tr-fail":
				return docket.Fail(errors.New("boom"))
			case "tr-panic":
				panic("kaboom")
			case "tr-fail-nil":
				return docket.Fail(nil)
			}
			return docket.Result{}
		},
	})
	events.WaitVerdicts(t, map[string]string{"tr-fail": "fail", "tr-panic": "panic", "tr-zero": "no_result", "tr-fail-nil": "fail"})
	testkit.StopWorker(t, w, done)

	for _, c := range []struct{ run, verdict, status, recorded string }{
		{"tr-fail", "fail", "docket: the handler failed the run (fail)", "boom"},
		{"tr-panic", "panic", "docket: the handler failed the run (panic)", "docket: handler panic: kaboom"},
		{"tr-zero", "no_result", "docket: the handler failed the run (no_result)", "docket: the handler returned the zero Result"},
		{"tr-fail-nil", "fail", "docket: the handler failed the run (fail)", ""},
	} {
		h := e.one("docket.handler", c.run)
		if h.Status().Code != codes.Error || h.Status().Description != c.status {
			t.Errorf("%s: handler span status %+v, want Error %q", c.run, h.Status(), c.status)
		}
		var recorded []string
		for _, ev := range h.Events() {
			for _, kv := range ev.Attributes {
				if kv.Key == "exception.message" {
					recorded = append(recorded, kv.Value.AsString())
				}
			}
		}
		if want := slices.DeleteFunc([]string{c.recorded}, func(s string) bool { return s == "" }); !slices.Equal(recorded, want) {
			t.Errorf("%s: recorded errors %q, want %q", c.run, recorded, want)
		}
		if got := attrs(h)["docket.verdict"]; got != c.verdict {
			t.Errorf("%s: handler verdict %q, want %q", c.run, got, c.verdict)
		}
		commit := e.one("docket.commit", c.run)
		if a := attrs(commit); a["docket.commit.outcome"] != "written" || a["docket.verdict"] != c.verdict || commit.Status().Code != codes.Unset {
			t.Errorf("%s: commit span %v status %v", c.run, a, commit.Status())
		}
	}
}

// A batch insert is one docket.insert span with the count and no run
// identity, and every run of the batch stores that span's context, also
// inside the caller's transaction.
func TestTraceInsertRunsTx(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.TenantFairConfig(2), true)
	ctx, request := e.app.Start(e.ctx, "app.request")
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	runs := []docket.NewRun{
		{RunID: "tr-b-1", Scope: docket.Tenant("tr-a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
		{RunID: "tr-b-2", Scope: docket.Tenant("tr-b"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
		{RunID: "tr-b-3", Scope: docket.Tenant("tr-a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
	}
	if _, err := e.client.InsertRunsTx(ctx, tx, runs); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	request.End()
	inserts := e.spans("docket.insert")
	if len(inserts) != 1 {
		t.Fatalf("%d docket.insert spans, want 1", len(inserts))
	}
	expectAttrs(t, inserts[0], map[string]string{"docket.runs.count": "3"})
	if inserts[0].Parent().SpanID() != request.SpanContext().SpanID() {
		t.Fatalf("insert span parent %v, want the request span", inserts[0].Parent())
	}
	want := fmt.Sprint(map[string]string{"traceparent": traceparent(inserts[0].SpanContext())})
	for _, r := range runs {
		if got := fmt.Sprint(e.stored(r.RunID)); got != want {
			t.Errorf("%s stored %s, want %s", r.RunID, got, want)
		}
	}

	// A refused insert ends its span with the error and stores nothing.
	e.recorder.Reset()
	_, err = e.client.InsertRun(e.ctx, docket.NewRun{RunID: "tr-b-1", Scope: docket.Tenant("tr-a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)})
	if !errors.Is(err, docket.ErrDuplicateRun) {
		t.Fatalf("duplicate insert: %v", err)
	}
	refused := e.spans("docket.insert")
	if len(refused) != 1 || refused[0].Status().Code != codes.Error || !strings.Contains(refused[0].Status().Description, "duplicate") {
		t.Fatalf("refused insert spans %v", e.spanNames())
	}
}

// ClaimDue and ClaimDueTx record one docket.claim span per call, as a child
// of the caller's span; a request refused before any SQL records none.
func TestTraceClaimDueSpans(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.TenantFairConfig(1), true)
	e.insert(e.ctx, docket.Tenant("tr-a"), "tr-c-1")
	e.insert(e.ctx, docket.Tenant("tr-a"), "tr-c-2")
	e.recorder.Reset()
	ctx, caller := e.app.Start(e.ctx, "app.poll")
	req := docket.ClaimRequest{Now: time.Now(), Limit: 5, ClaimTTL: time.Minute, MaxClaimAttempts: 5}
	res, err := e.client.ClaimDue(ctx, req)
	if err != nil || len(res.Leases) != 1 {
		t.Fatalf("claim: %v leases %d", err, len(res.Leases))
	}
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.ClaimDueTx(ctx, tx, req); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback(ctx)
	if _, err := e.client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now(), Limit: 0, MaxClaimAttempts: 1}); !errors.Is(err, docket.ErrInvalidArgument) {
		t.Fatalf("invalid claim: %v", err)
	}
	caller.End()
	claims := e.spans("docket.claim")
	if len(claims) != 2 {
		t.Fatalf("%d docket.claim spans, want 2 (one per call that ran); spans %v", len(claims), e.spanNames())
	}
	for i, wantLeases := range []string{"1", "0"} {
		c := claims[i]
		if c.Parent().SpanID() != caller.SpanContext().SpanID() {
			t.Errorf("claim span %d parent %v, want the caller's span", i, c.Parent())
		}
		expectAttrs(t, c, map[string]string{"docket.claim.engine": "tenant_fair", "docket.claim.demand": "5",
			"docket.claim.outcomes": wantLeases, "docket.claim.leases": wantLeases, "docket.claim.poisoned": "0"})
	}
}

// Without a TracerProvider Docket starts no span: an insert from a context
// without a span stores no trace context, one from a context with the
// caller's own span stores that span's context, and the handler runs with
// the Worker's context unchanged.
func TestTraceNilProvider(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.LegacyConfig(), false)
	e.insert(e.ctx, docket.Tenantless, "tr-n-empty")
	if got := e.stored("tr-n-empty"); got != nil {
		t.Fatalf("an insert without a span stored %v", got)
	}
	ctx, caller := e.app.Start(e.ctx, "app.request")
	e.insert(ctx, docket.Tenantless, "tr-n-caller")
	caller.End()
	if got, want := fmt.Sprint(e.stored("tr-n-caller")), fmt.Sprint(map[string]string{"traceparent": traceparent(caller.SpanContext())}); got != want {
		t.Fatalf("an insert inside the caller's span stored %s, want %s", got, want)
	}

	events := testkit.NewWorkerEvents()
	spanless := make(chan bool, 2)
	w, done := testkit.StartWorker(t, e.client, docket.WorkerConfig{
		Concurrency: 2,
		OnEvent:     events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			spanless <- !trace.SpanContextFromContext(ctx).IsValid()
			return docket.Complete(nil)
		},
	})
	events.WaitWritten(t, "complete", "tr-n-empty", "tr-n-caller")
	testkit.StopWorker(t, w, done)
	for range 2 {
		if !<-spanless {
			t.Fatal("a handler's context carried a span without a TracerProvider")
		}
	}
	if names := e.spanNames(); !slices.Equal(names, []string{"app.request"}) {
		t.Fatalf("recorded spans %v, want only the caller's", names)
	}
}

// A tenantless run's spans carry no tenant attribute.
func TestTraceTenantlessAttributes(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.LegacyConfig(), true)
	e.insert(e.ctx, docket.Tenantless, "tr-l-1")
	events := testkit.NewWorkerEvents()
	w, done := testkit.StartWorker(t, e.client, docket.WorkerConfig{
		Concurrency: 1,
		OnEvent:     events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			return docket.WaitExternal(nil)
		},
	})
	events.WaitWritten(t, "wait", "tr-l-1")
	testkit.StopWorker(t, w, done)
	expectAttrs(t, e.one("docket.insert", "tr-l-1"), map[string]string{
		"docket.runs.count": "1", "docket.run_id": "tr-l-1", "docket.graph_id": "tr-graph"})
	h := e.one("docket.handler", "tr-l-1")
	expectAttrs(t, h, map[string]string{
		"docket.run_id": "tr-l-1", "docket.graph_id": "tr-graph", "docket.step": "0", "docket.attempt": "1", "docket.verdict": "wait"})
	for _, c := range e.spans("docket.claim") {
		if got := attrs(c)["docket.claim.engine"]; got != "legacy" {
			t.Fatalf("claim span engine %q", got)
		}
	}
}

// A Worker whose Run context carries a span makes its claim and handler
// spans children of that span; the handler span still links to the insert.
func TestTraceWorkerContextParent(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.TenantFairConfig(2), true)
	e.insert(e.ctx, docket.Tenant("tr-acme"), "tr-p-1")
	events := testkit.NewWorkerEvents()
	w, err := docket.NewWorker(e.client, docket.WorkerConfig{
		Concurrency: 1,
		OnEvent:     events.Hook,
		Handler:     func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, service := e.app.Start(context.Background(), "app.worker")
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	events.WaitWritten(t, "complete", "tr-p-1")
	testkit.StopWorker(t, w, done)
	service.End()

	parent := service.SpanContext()
	handler := e.one("docket.handler", "tr-p-1")
	if handler.Parent().SpanID() != parent.SpanID() || handler.SpanContext().TraceID() != parent.TraceID() {
		t.Fatalf("handler span parent %v, want the Worker's span %v", handler.Parent().SpanID(), parent.SpanID())
	}
	if links := handler.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != e.one("docket.insert", "tr-p-1").SpanContext().SpanID() {
		t.Fatalf("handler span links %+v, want the insert span", links)
	}
	claims := e.spans("docket.claim")
	if len(claims) != 1 {
		t.Fatalf("%d claim spans, want the one of the call that leased the run", len(claims))
	}
	for _, c := range claims {
		if c.Parent().SpanID() != parent.SpanID() {
			t.Fatalf("claim span parent %v, want the Worker's span %v", c.Parent().SpanID(), parent.SpanID())
		}
	}
}

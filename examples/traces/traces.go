// Package traces is the manual's traces example as a program that runs: a
// client with an OpenTelemetry SDK TracerProvider inserts a run under the
// app's request span, a Worker works the run off, and the spans are printed
// with their parent and link relations. The block between the traces
// markers is the manual's code, byte for byte; a test keeps the two equal
// and runs Run on a fresh database.
package traces

import (
	"context"
	"encoding/json"
	"io"

	"github.com/jackc/pgx/v5/pgxpool"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Run inserts invoice-42 under a "POST /invoices" span on pool's migrated
// database with a client traced into an in-memory exporter, works the run
// off with a Worker until its verdict is written, and prints the spans to
// out (see printSpans).
func Run(ctx context.Context, pool *pgxpool.Pool, out io.Writer) error {
	exporter := tracetest.NewInMemoryExporter()
	return traced(ctx, pool, exporter, func(client *docket.Client, tp *sdktrace.TracerProvider) error {
		if err := workOff(ctx, client, "invoice-42"); err != nil {
			return err
		}
		if err := tp.ForceFlush(ctx); err != nil {
			return err
		}
		return printSpans(out, exporter.GetSpans())
	})
}

// traced is the manual's block: it opens a traced client and inserts the
// run under the app's span, then hands the client and provider to then.
func traced(ctx context.Context, pool *pgxpool.Pool, exporter sdktrace.SpanExporter, then func(*docket.Client, *sdktrace.TracerProvider) error) error {
	// traces:begin
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter)) // your OpenTelemetry SDK set-up
	defer tp.Shutdown(context.WithoutCancel(ctx))
	client, err := docket.Open(ctx, pool, docket.Config{
		TenantMode:     docket.TenantRequired,
		ClaimPolicy:    policy.TenantFair{DefaultMaxActiveRuns: 4},
		TracerProvider: tp,
	})
	if err != nil {
		return err
	}

	// The app's request inserts the run: docket.insert is a child of its span.
	reqCtx, request := tp.Tracer("app").Start(ctx, "POST /invoices")
	_, err = client.InsertRun(reqCtx, docket.NewRun{
		RunID: "invoice-42", Scope: docket.Tenant("acme"), GraphID: "send-invoice", GraphHash: "v1",
		State: json.RawMessage(`{"invoice": 42}`),
	})
	request.End()
	if err != nil {
		return err
	}
	// traces:end
	return then(client, tp)
}

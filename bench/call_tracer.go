package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// riverFetchStatement is the sqlc name of the statement River's producer
// fetches jobs with (riverdriver.Executor.JobGetAvailable); River's
// generated queries are internal to its driver, so the name is spelled here.
const riverFetchStatement = "JobGetAvailable"

// docketClaimStatements are the sqlc names of the claim statements a Docket
// Worker sends in its claim batch: the combined one of TenantFair, and
// Legacy's. A combined claim that
// found a combiner at work is two such batches (the first try and the wait),
// each timed as a call of its own.
func docketClaimStatements() []string {
	return []string{statementName(dbgen.TenantFairClaimCombinedNoted), statementName(dbgen.LegacyClaimNoted)}
}

// statementName is the sqlc name of a generated statement: the first word
// after its leading "-- name: " comment ("" without one). Schema scoping
// rewrites the body, never that comment.
func statementName(sql string) string {
	rest, ok := strings.CutPrefix(sql, "-- name: ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// callTracer times the claim calls of every pool it is set on: a query, or
// a batch, that carries one of its statements is timed from pgx's start of
// it on its connection (after the pool handed the connection out) until
// its results were closed. Only calls without an error count.
type callTracer struct {
	names map[string]bool
	mu    sync.Mutex
	calls []time.Duration
}

// callStart is the context key of a timed call's start.
type callStart struct{}

// newCallTracer times the statements of the given sqlc names.
func newCallTracer(names ...string) *callTracer {
	t := &callTracer{names: map[string]bool{}}
	for _, n := range names {
		t.names[n] = true
	}
	return t
}

// durations returns a copy of the timed calls so far.
func (t *callTracer) durations() []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Duration(nil), t.calls...)
}

// begin marks ctx as a timed call when sql is one of the statements.
func (t *callTracer) begin(ctx context.Context, sql string) context.Context {
	if !t.names[statementName(sql)] {
		return ctx
	}
	return context.WithValue(ctx, callStart{}, time.Now())
}

// end records the call begun in ctx, if it was timed and succeeded.
func (t *callTracer) end(ctx context.Context, err error) {
	start, ok := ctx.Value(callStart{}).(time.Time)
	if !ok || err != nil {
		return
	}
	d := time.Since(start)
	t.mu.Lock()
	t.calls = append(t.calls, d)
	t.mu.Unlock()
}

// TraceQueryStart implements pgx.QueryTracer.
func (t *callTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return t.begin(ctx, data.SQL)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (t *callTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.end(ctx, data.Err)
}

// TraceBatchStart implements pgx.BatchTracer: a batch is timed as one call
// when any of its statements is one of the tracer's.
func (t *callTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	for _, q := range data.Batch.QueuedQueries {
		if t.names[statementName(q.SQL)] {
			return context.WithValue(ctx, callStart{}, time.Now())
		}
	}
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (t *callTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (t *callTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	t.end(ctx, data.Err)
}

// Package demo is "docket demo": one backlog, a hot tenant inserted ahead of
// many light ones, drained by a Worker under the tenant-blind Legacy engine
// and then under TenantFair, with the waits each engine gives both cohorts.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Options configures Run.
type Options struct {
	// DatabaseURL names an existing database to work in (two fresh schemas,
	// dropped afterwards); "" starts a throwaway local PostgreSQL instead.
	DatabaseURL string
	// HotRuns is the hot tenant's backlog, inserted first.
	HotRuns int
	// LightTenants and LightRuns shape the light cohort, inserted after the
	// hot backlog: LightTenants tenants with LightRuns runs each.
	LightTenants int
	LightRuns    int
	// Concurrency is the worker's concurrency.
	Concurrency int
	// Cap is TenantFair's default cap on each tenant's admitted runs.
	Cap int
	// HandlerTime is how long the handler works on each run.
	HandlerTime time.Duration
	// Out receives progress and the report.
	Out io.Writer
	// Keep leaves the demo's schemas in place after the report and prints
	// the database URL and the "docket console" command for each; on a
	// throwaway local server Run then waits for ctx to end (Ctrl-C) before
	// it stops the server.
	Keep bool
}

// DefaultOptions is the standard demo: 2,000 hot runs, 20 light tenants of
// 10 runs, concurrency 8, cap 4, a 2 ms handler.
func DefaultOptions() Options {
	return Options{HotRuns: 2000, LightTenants: 20, LightRuns: 10, Concurrency: 8, Cap: 4, HandlerTime: 2 * time.Millisecond}
}

// ErrInvalidOptions reports Options that Run refuses before starting anything.
var ErrInvalidOptions = errors.New("demo: invalid options")

// validate checks o.
func (o Options) validate() error {
	switch {
	case o.HotRuns < 1, o.LightTenants < 1, o.LightRuns < 1:
		return fmt.Errorf("%w: every cohort needs at least one tenant and one run", ErrInvalidOptions)
	case o.Concurrency < 1:
		return fmt.Errorf("%w: concurrency %d is below 1", ErrInvalidOptions, o.Concurrency)
	case o.Cap < 1 || o.Cap > docket.MaxCap:
		return fmt.Errorf("%w: cap %d: %w", ErrInvalidOptions, o.Cap, docket.ErrInvalidCap)
	case o.HandlerTime < 0:
		return fmt.Errorf("%w: negative handler time", ErrInvalidOptions)
	case o.Out == nil:
		return fmt.Errorf("%w: no output", ErrInvalidOptions)
	}
	return nil
}

// total is the number of runs of one backlog.
func (o Options) total() int { return o.HotRuns + o.LightTenants*o.LightRuns }

// engine is one admission engine under test.
type engine struct {
	// name is the engine's policy name; it also names its schema.
	name string
	// label describes the engine in progress lines.
	label  string
	config docket.Config
}

// engines returns Legacy and TenantFair, in the order the demo runs them.
func engines(o Options) []engine {
	return []engine{
		{name: "legacy", label: "Legacy (tenant mode none)",
			config: docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}}},
		{name: "tenant_fair", label: fmt.Sprintf("TenantFair (tenant mode required, cap %d)", o.Cap),
			config: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: o.Cap}}},
	}
}

// Run runs the demo and writes its progress and report to o.Out. Whatever it
// created (a local server, schemas) is removed before it returns, also when
// ctx is cancelled or a step fails.
func Run(ctx context.Context, o Options) (err error) {
	if err := o.validate(); err != nil {
		return err
	}
	began := time.Now()
	fmt.Fprintf(o.Out, "docket demo: 1 hot tenant x %d runs inserted first, then %d light tenants x %d runs;\n",
		o.HotRuns, o.LightTenants, o.LightRuns)
	fmt.Fprintf(o.Out, "one Worker of concurrency %d drains the same backlog under each engine, handler %s per run\n\n",
		o.Concurrency, o.HandlerTime)
	databaseURL, release, err := openDatabase(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, release()) }()

	var results []drainResult
	for _, e := range engines(o) {
		res, err := drainEngine(ctx, databaseURL, e, o)
		if err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
		results = append(results, res)
	}
	writeReport(o.Out, o, results)
	fmt.Fprintf(o.Out, "\nwall time %s\n", time.Since(began).Round(10*time.Millisecond))
	if o.Keep {
		keep(ctx, o, databaseURL, results)
	}
	return nil
}

// keep prints how to open the kept schemas in the console and, on the
// throwaway local server, waits for ctx to end before Run removes it.
func keep(ctx context.Context, o Options, databaseURL string, results []drainResult) {
	fmt.Fprintf(o.Out, "\nkept the demo's schemas; database URL: %s\n", databaseURL)
	fmt.Fprintln(o.Out, "open them in the operator console (one fairness domain per schema):")
	for _, res := range results {
		fmt.Fprintf(o.Out, "  docket console --database-url '%s' --schema %s\n", databaseURL, res.schema)
	}
	if o.DatabaseURL != "" {
		fmt.Fprintln(o.Out, "drop them yourself when done (drop schema ... cascade)")
		return
	}
	fmt.Fprintln(o.Out, "the local PostgreSQL keeps running until Ctrl-C")
	<-ctx.Done()
}

// Command bench is Docket's scorecard: it starts a throwaway local
// PostgreSQL, measures the claim ceiling, end-to-end drain, tenant
// fairness, scale, contention, fast/slow, surge, dormant-tenant and fleet
// scenarios for Docket's TenantFair and Legacy engines (and River where the
// scorecard compares),
// prints one table per scenario and writes every figure as JSON.
//
// Figures are ratios against baselines measured in the same process; they
// detect regressions and never prove fairness, which the oracle tests check.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// run parses args, runs the selected scenarios (or the profile) and reports.
func run(ctx context.Context, args []string, out io.Writer) (err error) {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	p := newProgress(out)
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
	}
	p.logf("starting a throwaway PostgreSQL under %s", o.pgTempDir)
	c, err := startCluster(ctx, o.pgTempDir, o.profile != "", p.logf)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, c.stop())
		p.logf("removed the throwaway PostgreSQL")
	}()
	if o.profile != "" {
		return runProfile(ctx, c, o, p)
	}
	res := &results{Quick: o.quick, Sizes: o.sizes, RiverFetch: riverFetch{Cooldown: o.riverCooldown, Poll: o.riverPoll}}
	if res.Machine, err = describeMachine(ctx, c); err != nil {
		return err
	}
	p.logf("PostgreSQL %s, %d CPUs, %.1f GiB", res.Machine.Postgres, res.Machine.CPUs, res.Machine.MemoryGiB)
	if err := runScenarios(ctx, c, o, p, res); err != nil {
		return err
	}
	res.Targets = evaluateTargets(res)
	res.Machine.LoadEnd = loadAverage()
	res.WallSeconds = p.elapsed().Seconds()
	report(out, res)
	if o.out != "" {
		if err := res.write(o.out); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		p.logf("wrote %s", o.out)
	}
	return nil
}

// runScenarios runs each selected scenario in the standard order.
func runScenarios(ctx context.Context, c *cluster, o options, p *progress, res *results) error {
	var err error
	steps := []struct {
		name string
		run  func() error
	}{
		{"ceiling", func() error { res.Ceiling, err = runCeiling(ctx, c, o, p); return err }},
		{"drain", func() error { res.Drain, err = runDrain(ctx, c, o, p); return err }},
		{"fairness", func() error { res.Fairness, err = runFairness(ctx, c, o, p); return err }},
		{"scale", func() error { res.Scale, err = runScale(ctx, c, o, p); return err }},
		{"contention", func() error { res.Contention, err = runContention(ctx, c, o, p); return err }},
		{"fastslow", func() error { res.FastSlow, err = runFastSlow(ctx, c, o, p); return err }},
		{"surge", func() error { res.Surge, err = runSurge(ctx, c, o, p); return err }},
		{"dormant", func() error { res.Dormant, err = runDormant(ctx, c, o, p); return err }},
		{"fleet", func() error { res.Fleet, err = runFleet(ctx, c, o, p); return err }},
		{"rate", func() error { res.Rate, err = runRate(ctx, c, o, p); return err }},
	}
	for _, s := range steps {
		if !o.selected(s.name) {
			continue
		}
		began := time.Now()
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		p.logf("%s done in %s", s.name, time.Since(began).Round(100*time.Millisecond))
	}
	return nil
}

// report prints every table of the run.
func report(w io.Writer, r *results) {
	fmt.Fprintf(w, "\nDocket scorecard: PostgreSQL %s, %d CPUs (%s), %.1f GiB, %s, quick=%v, load average %s at start, %s at end\n",
		r.Machine.Postgres, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.MemoryGiB, r.Machine.Go, r.Quick, r.Machine.LoadStart, r.Machine.LoadEnd)
	tables := []interface{ table() *table }{}
	if r.Ceiling != nil {
		tables = append(tables, r.Ceiling)
	}
	if r.Drain != nil {
		tables = append(tables, r.Drain)
	}
	if r.Fairness != nil {
		tables = append(tables, r.Fairness)
	}
	if r.Scale != nil {
		tables = append(tables, r.Scale)
	}
	if r.Contention != nil {
		tables = append(tables, r.Contention)
	}
	if r.FastSlow != nil {
		tables = append(tables, r.FastSlow)
	}
	if r.Surge != nil {
		tables = append(tables, r.Surge)
	}
	if r.Dormant != nil {
		tables = append(tables, r.Dormant)
	}
	if r.Fleet != nil {
		tables = append(tables, r.Fleet)
	}
	if r.Rate != nil {
		tables = append(tables, r.Rate)
	}
	for _, t := range tables {
		t.table().print(w)
	}
	if len(r.Targets) > 0 {
		targetTable(r.Targets).print(w)
	}
	fmt.Fprintf(w, "\nwall time %s\n", (time.Duration(r.WallSeconds * float64(time.Second))).Round(100*time.Millisecond))
}

// startCPUProfile profiles the bench process's CPU into path until the
// returned stop is called.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(fmt.Errorf("-cpuprofile: %w", err), f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

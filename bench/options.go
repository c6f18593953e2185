package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// scenarioNames are the scenarios in the order a full run executes them.
var scenarioNames = []string{"ceiling", "drain", "fairness", "scale", "contention", "fastslow", "surge", "dormant", "fleet", "rate"}

// options are the command-line settings of one scorecard run.
type options struct {
	// out is the JSON results file ("" writes none).
	out string
	// quick scales every scenario down for a fast smoke run.
	quick bool
	// run selects the scenarios to execute.
	run []string
	// pgTempDir is the parent directory of the throwaway cluster.
	pgTempDir string
	// profile, when set, runs the TenantFair claim profile instead of the
	// scenarios and writes it to this file.
	profile string
	// cpuProfile, when set, is where the bench process's own CPU profile
	// goes (the clients' side of every scenario, not PostgreSQL's).
	cpuProfile string
	// rounds is how many times the ceiling, drain, dormant and fleet measurements are
	// repeated, interleaved across engines; each engine's best round counts.
	rounds int
	// riverCooldown and riverPoll are River's FetchCooldown and
	// FetchPollInterval in the drain and fleet scenarios.
	riverCooldown, riverPoll time.Duration
	// fleetVerdictWait is the VerdictBatchWait of the fleet scenario's
	// extra TenantFair row; 0 runs no such row.
	fleetVerdictWait time.Duration
	// fleetClaimAhead is the ClaimAhead of the fleet scenario's row that
	// also claims ahead; 0 runs no such row.
	fleetClaimAhead int
	// sizes are the scenario dimensions, full or quick.
	sizes sizes
}

// parseOptions reads the command line.
func parseOptions(args []string) (options, error) {
	var o options
	var run, dormant string
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "results.json", "write every figure as JSON to this file (empty: none)")
	fs.BoolVar(&o.quick, "quick", false, "scale every scenario down (smoke run, figures are noisier)")
	fs.StringVar(&run, "run", strings.Join(scenarioNames, ","), "comma-separated scenarios to run: "+strings.Join(scenarioNames, ", "))
	fs.StringVar(&o.pgTempDir, "pg-tmpdir", os.TempDir(), "parent directory of the throwaway PostgreSQL cluster (a disk, since the scale scenario holds a million runs)")
	fs.StringVar(&o.profile, "profile", "", "instead of the scenarios, profile TenantFair claim calls (pg_stat_statements, auto_explain) and write the report to this file")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the bench process's CPU profile (the clients' side, for go tool pprof) to this file")
	fs.IntVar(&o.rounds, "rounds", 2, "rounds of the ceiling, drain, dormant, fleet and rate scenarios, interleaved across engines (a dormant drain that used its whole budget runs once); the best round of each engine is reported")
	fs.DurationVar(&o.riverCooldown, "river-fetch-cooldown", time.Millisecond, "River FetchCooldown in the drain and fleet scenarios")
	fs.DurationVar(&o.riverPoll, "river-fetch-poll", 100*time.Millisecond, "River FetchPollInterval in the drain and fleet scenarios")
	fs.DurationVar(&o.fleetVerdictWait, "fleet-verdict-wait", 20*time.Millisecond, "VerdictBatchWait of the fleet scenario's extra TenantFair row (0: no such row)")
	fs.IntVar(&o.fleetClaimAhead, "fleet-claim-ahead", fleetClaimAhead, "ClaimAhead of the fleet scenario's TenantFair row whose Workers also claim ahead, with verdicts waiting -fleet-verdict-wait (0: no such row)")
	fs.StringVar(&dormant, "dormant-tenants", "", "comma-separated dormant tenant counts of the dormant scenario (default 0,20000,100000; with -quick 0,20000)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.rounds < 1 {
		return o, fmt.Errorf("-rounds %d is below 1", o.rounds)
	}
	if o.fleetClaimAhead < 0 {
		return o, fmt.Errorf("-fleet-claim-ahead %d is below 0", o.fleetClaimAhead)
	}
	for _, name := range strings.Split(run, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(scenarioNames, name) {
			return o, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(scenarioNames, ", "))
		}
		o.run = append(o.run, name)
	}
	o.sizes = fullSizes()
	if o.quick {
		o.sizes = quickSizes()
	}
	if dormant != "" {
		counts, err := parseCounts(dormant)
		if err != nil {
			return o, fmt.Errorf("-dormant-tenants: %w", err)
		}
		o.sizes.DormantTenants = counts
	}
	return o, nil
}

// parseCounts reads a comma-separated list of counts >= 0.
func parseCounts(list string) ([]int, error) {
	var counts []int
	for _, field := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a count", field)
		}
		counts = append(counts, n)
	}
	return counts, nil
}

// selected reports whether scenario name is to run.
func (o options) selected(name string) bool { return slices.Contains(o.run, name) }

package demo

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// cohortWaits are one cohort's waits (first handler start minus insert time).
type cohortWaits struct {
	p50, p95 time.Duration
}

// waitsOf returns the median and 95th percentile of starts minus inserted.
func waitsOf(starts []time.Time, inserted time.Time) cohortWaits {
	waits := make([]time.Duration, len(starts))
	for i, s := range starts {
		waits[i] = s.Sub(inserted)
	}
	slices.Sort(waits)
	return cohortWaits{p50: percentile(waits, 50), p95: percentile(waits, 95)}
}

// percentile is the nearest-rank percentile p of sorted; 0 when empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// hotBeforeLastLight counts hot runs that started before the last light run did.
func hotBeforeLastLight(r drainResult) int {
	if len(r.lightStarts) == 0 {
		return 0
	}
	last := slices.MaxFunc(r.lightStarts, func(a, b time.Time) int { return a.Compare(b) })
	n := 0
	for _, s := range r.hotStarts {
		if s.Before(last) {
			n++
		}
	}
	return n
}

// writeReport prints one column per engine, then the claim policy views.
func writeReport(w io.Writer, o Options, results []drainResult) {
	rows := [][]string{{""}}
	for _, r := range results {
		rows[0] = append(rows[0], r.engine.name)
	}
	add := func(label string, cell func(r drainResult) string) {
		row := []string{label}
		for _, r := range results {
			row = append(row, cell(r))
		}
		rows = append(rows, row)
	}
	drainTime := func(r drainResult) time.Duration { return r.finished.Sub(r.began) }
	add("drain time", func(r drainResult) string { return drainTime(r).Round(time.Millisecond).String() })
	add("throughput (runs/s)", func(r drainResult) string {
		return fmt.Sprintf("%.0f", float64(o.total())/drainTime(r).Seconds())
	})
	add("hot wait p50", func(r drainResult) string { return duration(waitsOf(r.hotStarts, r.hotInserted).p50) })
	add("hot wait p95", func(r drainResult) string { return duration(waitsOf(r.hotStarts, r.hotInserted).p95) })
	add("light wait p50", func(r drainResult) string { return duration(waitsOf(r.lightStarts, r.lightInserted).p50) })
	add("light wait p95", func(r drainResult) string { return duration(waitsOf(r.lightStarts, r.lightInserted).p95) })
	add("light p95 wait / drain time", func(r drainResult) string {
		return fmt.Sprintf("%.1f%%", 100*waitsOf(r.lightStarts, r.lightInserted).p95.Seconds()/drainTime(r).Seconds())
	})
	add(fmt.Sprintf("hot runs started before the last light run (of %d)", o.HotRuns), func(r drainResult) string {
		return fmt.Sprint(hotBeforeLastLight(r))
	})
	add(fmt.Sprintf("handler invocations (runs: %d)", o.total()), func(r drainResult) string { return fmt.Sprint(r.invocations) })

	fmt.Fprintf(w, "\nResults (wait = first handler start - insert time)\n\n")
	writeTable(w, rows)
	fmt.Fprintf(w, "\nInspectClaimPolicy(tenant %q)\n", hotTenant)
	for _, r := range results {
		writePolicyView(w, r, o)
	}
}

// writePolicyView prints what InspectClaimPolicy said about the hot tenant.
func writePolicyView(w io.Writer, r drainResult, o Options) {
	fmt.Fprintf(w, "  %s:\n", r.engine.name)
	if v := r.policy; v.mid != nil {
		fmt.Fprintf(w, "    mid-drain (%d/%d done): %s\n", v.midDone, o.total(), inspection(*v.mid))
		fmt.Fprintf(w, "    highest admitted count over %d samples: %d (cap %d)\n", v.samples, v.maxAdmitted, o.Cap)
	}
	switch err := r.policy.afterErr; {
	case errors.Is(err, docket.ErrNotInitialized):
		// Legacy never initializes the TenantFair policy: there is no cap
		// and no admission state to show.
		fmt.Fprintf(w, "    no cap and no admission state: the tenant-blind engine keeps none (ErrNotInitialized)\n")
		return
	case err != nil:
		fmt.Fprintf(w, "    after the drain: %v\n", err)
		return
	}
	fmt.Fprintf(w, "    after the drain: %s\n", inspection(r.policy.after))
}

// inspection formats one claim policy snapshot.
func inspection(i docket.ClaimPolicyInspection) string {
	return fmt.Sprintf("mode %s, cap %d (%s), admitted %d (claimed %d, ready %d), queued %d, debt %d, unfinished %d, admission epoch %d",
		i.AdmissionMode, i.EffectiveMaxActiveRuns, i.Source, i.Admitted, i.AdmittedClaimed, i.AdmittedReady,
		i.Queued, i.Debt, i.Unfinished, i.AdmissionEpoch)
}

// duration rounds d for the table.
func duration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// writeTable prints rows with the first column left-aligned and the others
// right-aligned.
func writeTable(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, cell := range row {
			if i == 0 {
				fmt.Fprintf(&b, "  %-*s", widths[i], cell)
				continue
			}
			fmt.Fprintf(&b, "  %*s", widths[i]+2, cell)
		}
		fmt.Fprintln(w, b.String())
	}
}

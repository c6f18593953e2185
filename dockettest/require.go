package dockettest

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// RequireInserted fails t unless the run expect names was inserted and
// matches every field expect sets, and returns it as read (its State,
// Step, Status, ids, CheckpointSeq, LatestCheckpointType, WakeAt and
// InsertedAt). Without a RunID some run of expect.GraphID in expect.Scope
// must match; the first in insert order is returned. db is the pool or the
// docket.Client; the read sees what is committed.
func RequireInserted[D DB](ctx context.Context, t TB, db D, expect Expect) docket.Run {
	t.Helper()
	q, schema := source(db)
	return requireInserted(ctx, t, q, schema, expect)
}

// RequireInsertedTx is RequireInserted read inside tx, the application's
// own transaction, so it sees the runs tx inserted before it commits.
func RequireInsertedTx(ctx context.Context, t TB, tx pgx.Tx, expect Expect) docket.Run {
	t.Helper()
	return requireInserted(ctx, t, txQuerier(tx), "", expect)
}

// RequireNotInserted fails t if a run matches expect: the run RunID in
// expect.Scope with every field expect sets, or, without a RunID, any run
// of expect.GraphID in expect.Scope with those fields.
func RequireNotInserted[D DB](ctx context.Context, t TB, db D, expect Expect) {
	t.Helper()
	q, schema := source(db)
	requireNotInserted(ctx, t, q, schema, expect)
}

// RequireNotInsertedTx is RequireNotInserted read inside tx.
func RequireNotInsertedTx(ctx context.Context, t TB, tx pgx.Tx, expect Expect) {
	t.Helper()
	requireNotInserted(ctx, t, txQuerier(tx), "", expect)
}

// RequireManyInserted fails t unless the runs of the scopes that expects
// name are exactly expects, one run per expectation, in insert order (the
// order of the statements, and the input order within one InsertRuns), and
// returns them in that order. Runs of other scopes are not looked at.
func RequireManyInserted[D DB](ctx context.Context, t TB, db D, expects []Expect) []docket.Run {
	t.Helper()
	q, schema := source(db)
	return requireManyInserted(ctx, t, q, schema, expects)
}

// RequireManyInsertedTx is RequireManyInserted read inside tx.
func RequireManyInsertedTx(ctx context.Context, t TB, tx pgx.Tx, expects []Expect) []docket.Run {
	t.Helper()
	return requireManyInserted(ctx, t, txQuerier(tx), "", expects)
}

// txQuerier is tx as a querier; a nil tx is no database.
func txQuerier(tx pgx.Tx) querier {
	if tx == nil {
		return nil
	}
	return tx
}

func requireInserted(ctx context.Context, t TB, q querier, schema string, expect Expect) docket.Run {
	t.Helper()
	r, err := newReader(q, schema, expect)
	if err != nil {
		t.Fatalf("dockettest: RequireInserted: %v", err)
		return docket.Run{}
	}
	runs, err := r.candidates(ctx, expect)
	if err != nil {
		t.Fatalf("dockettest: RequireInserted: %v", err)
		return docket.Run{}
	}
	if len(runs) == 0 {
		t.Fatalf("dockettest: %s was not inserted", expect.describe())
		return docket.Run{}
	}
	var report []string
	for _, s := range runs {
		d := expect.diff(s.run)
		if len(d) == 0 {
			return s.run
		}
		report = append(report, differences(s.run, d)...)
	}
	t.Fatalf("dockettest: %s differs from the expectation:\n%s", expect.describe(), strings.Join(report, "\n"))
	return docket.Run{}
}

func requireNotInserted(ctx context.Context, t TB, q querier, schema string, expect Expect) {
	t.Helper()
	r, err := newReader(q, schema, expect)
	if err != nil {
		t.Fatalf("dockettest: RequireNotInserted: %v", err)
		return
	}
	runs, err := r.candidates(ctx, expect)
	if err != nil {
		t.Fatalf("dockettest: RequireNotInserted: %v", err)
		return
	}
	var matching []string
	for _, s := range runs {
		if len(expect.diff(s.run)) == 0 {
			matching = append(matching, fmt.Sprintf("%q", s.run.RunID))
		}
	}
	if len(matching) > 0 {
		t.Fatalf("dockettest: %s was inserted, want none: matching run(s) %s", expect.describe(), strings.Join(matching, ", "))
	}
}

func requireManyInserted(ctx context.Context, t TB, q querier, schema string, expects []Expect) []docket.Run {
	t.Helper()
	if len(expects) == 0 {
		t.Fatalf("dockettest: RequireManyInserted: no expectations; RequireNotInserted asserts an absence")
		return nil
	}
	r, err := newReader(q, schema, expects...)
	if err != nil {
		t.Fatalf("dockettest: RequireManyInserted: %v", err)
		return nil
	}
	runs, scopes, err := r.inScopes(ctx, expects)
	if err != nil {
		t.Fatalf("dockettest: RequireManyInserted: %v", err)
		return nil
	}
	var report []string
	out := make([]docket.Run, 0, len(runs))
	for i := range max(len(runs), len(expects)) {
		switch {
		case i >= len(runs):
			report = append(report, fmt.Sprintf("  index %d: missing, want %s", i, expects[i].describe()))
		case i >= len(expects):
			s := runs[i].run
			report = append(report, fmt.Sprintf("  index %d: run %q (%s, graph %q, status %s) is not expected", i, s.RunID, s.Scope, s.GraphID, s.Status))
		default:
			out = append(out, runs[i].run)
			if d := expects[i].diff(runs[i].run); len(d) > 0 {
				report = append(report, fmt.Sprintf("  index %d: want %s", i, expects[i].describe()))
				report = append(report, differences(runs[i].run, d)...)
			}
		}
	}
	if len(report) > 0 {
		names := make([]string, len(scopes))
		for i, s := range scopes {
			names[i] = s.String()
		}
		t.Fatalf("dockettest: the %d run(s) of %s, in insert order, differ from the %d expectation(s):\n%s",
			len(runs), strings.Join(names, ", "), len(expects), strings.Join(report, "\n"))
		return nil
	}
	return out
}

// differences renders the lines of d under the run they describe.
func differences(run docket.Run, d []string) []string {
	out := []string{fmt.Sprintf("    run %q (%s):", run.RunID, run.Scope)}
	for _, line := range d {
		out = append(out, "      "+line)
	}
	return out
}

package input

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A refused batch names the offending entry by its index in the batch,
// counted from 0 like the slice the caller passed: an invalid run, a run id
// repeated inside the batch and a run id that already exists.
func TestBatchErrorsNameTheIndex(t *testing.T) {
	t.Parallel()
	env := newHardInputEnv(t)
	ctx := testkit.Context(t)
	noGraph := newRun("fresh-2")
	noGraph.GraphID = ""
	for _, tc := range []struct {
		name  string
		runs  []docket.NewRun
		want  string
		is    error
		local bool
	}{
		{"an invalid run", []docket.NewRun{newRun("fresh-1"), noGraph}, "run at index 1 of the batch: docket: invalid argument: graph id is empty",
			docket.ErrInvalidArgument, true},
		{"a run id repeated in the batch", []docket.NewRun{newRun("fresh-1"), newRun("twin"), newRun("fresh-2"), newRun("twin")},
			`docket: duplicate run id: run "twin" at index 3 repeats index 1 of the batch`, docket.ErrDuplicateRun, true},
		{"an existing run id", []docket.NewRun{newRun("fresh-1"), newRun("fresh-2"), newRun(runHeld)},
			`docket: duplicate run id: run "held" at index 2 of the batch already exists`, docket.ErrDuplicateRun, false},
		{"another tenant's run id", []docket.NewRun{newRun(runOther)},
			`docket: duplicate run id: run "other" at index 0 of the batch already exists`, docket.ErrDuplicateRun, false},
	} {
		env.counter.n.Store(0)
		_, err := env.client.InsertRuns(ctx, tc.runs)
		if err == nil || err.Error() != tc.want || !errors.Is(err, tc.is) {
			t.Errorf("InsertRuns with %s: %v\nwant %s (%v)", tc.name, err, tc.want, tc.is)
		}
		if sent := env.counter.n.Load(); tc.local && sent != 0 {
			t.Errorf("InsertRuns with %s sent %d statement(s) before refusing", tc.name, sent)
		}
	}

	// Refused before the database, a repeated run id leaves the caller's
	// transaction usable.
	tx := env.begin(ctx, pgx.TxOptions{})
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := env.client.InsertRunsTx(ctx, tx, []docket.NewRun{newRun("twin"), newRun("twin")}); err == nil ||
		err.Error() != `docket: duplicate run id: run "twin" at index 1 repeats index 0 of the batch` {
		t.Errorf("InsertRunsTx with a repeated run id: %v", err)
	}
	if _, err := tx.Exec(ctx, "select 1"); err != nil {
		t.Errorf("the transaction is unusable after a refused batch: %v", err)
	}
	if got := testkit.QueryInt64(t, env.super, `select count(*) from docket_runs where run_id in ('fresh-1', 'fresh-2', 'twin')`); got != 0 {
		t.Errorf("refused batches inserted %d run(s)", got)
	}

	// A claim row outside the contract is named by its index too.
	kind := "outcome"
	if _, err := (claimpolicy.Legacy{}).Decode([]claimpolicy.Row{{RowKind: &kind}, {}}); err == nil ||
		err.Error() != "policy: malformed claim row: row at index 0: run_id is NULL" {
		t.Errorf("Decode of a malformed row: %v", err)
	}
}

package lifecycle

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A run's own MaxAttempts is stored by every insert (NULL when 0) and read
// back; a negative one or one beyond int32 is ErrInvalidArgument before any
// SQL, from InsertRun and from InsertRuns naming the index, and nothing is
// written. The generated app queries meet the named check instead: 0 from
// gen.InsertRun, -1 in gen.InsertRuns' array, both ErrInvalidArgument
// through docket.RunWriteError; gen.InsertRuns without the array inserts
// runs without one.
func TestRunMaxAttemptsAtInsert(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimTenantFair(t, 2)
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	run := func(id string, maxAttempts int) docket.NewRun {
		return docket.NewRun{RunID: id, Scope: acme, GraphID: "g", GraphHash: "h1", State: json.RawMessage(`{}`), MaxAttempts: maxAttempts}
	}
	if got, err := e.Client.InsertRun(ctx, run("ma-5", 5)); err != nil || got.MaxAttempts != 5 {
		t.Fatalf("InsertRun with MaxAttempts 5: %+v, %v", got, err)
	}
	if _, err := e.Client.InsertRuns(ctx, []docket.NewRun{run("ma-1", 1), run("ma-none", 0), run("ma-max", math.MaxInt32)}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int{"ma-5": 5, "ma-1": 1, "ma-none": 0, "ma-max": math.MaxInt32} {
		got, err := e.Client.FetchRun(ctx, acme, id)
		if err != nil || got.MaxAttempts != want {
			t.Fatalf("%s: MaxAttempts %d, %v; want %d", id, got.MaxAttempts, err, want)
		}
	}
	if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where max_attempts is null`); n != 1 {
		t.Fatalf("%d runs store no max attempts, want 1 (ma-none)", n)
	}

	for _, bad := range []int{-1, math.MaxInt32 + 1} {
		if _, err := e.Client.InsertRun(ctx, run("ma-bad", bad)); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Fatalf("InsertRun with MaxAttempts %d: %v, want ErrInvalidArgument", bad, err)
		}
		if _, err := e.Client.InsertRuns(ctx, []docket.NewRun{run("ma-ok", 2), run("ma-bad", bad)}); !errors.Is(err, docket.ErrInvalidArgument) ||
			err.Error() != "run at index 1 of the batch: docket: invalid argument: max attempts "+strconv.Itoa(bad)+" is outside 1..2147483647" {
			t.Fatalf("InsertRuns with MaxAttempts %d: %v", bad, err)
		}
	}

	q := gen.New(e.Pool)
	tenant := "acme"
	zero := int32(0)
	_, err := q.InsertRun(ctx, gen.InsertRunParams{RunID: "ma-gen-0", TenantID: &tenant, GraphID: "g", GraphHash: "h1", State: "{}", MaxAttempts: &zero})
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23514" || pgErr.ConstraintName != "docket_runs_max_attempts_check" {
		t.Fatalf("gen.InsertRun with max attempts 0: %v, want a violation of docket_runs_max_attempts_check", err)
	}
	if err := docket.RunWriteError(err); !errors.Is(err, docket.ErrInvalidArgument) {
		t.Fatalf("RunWriteError: %v, want ErrInvalidArgument", err)
	}
	batch := gen.InsertRunsParams{RunIds: []string{"ma-gen-a", "ma-gen-b"}, ScopeKeys: []string{"acme", "acme"},
		GraphIds: []string{"g", "g"}, GraphHashes: []string{"h1", "h1"}, States: []string{"{}", "{}"}}
	batch.WakeAts = make([]time.Time, 2)
	batch.MaxAttempts = []int32{3, -1}
	if _, err := q.InsertRuns(ctx, batch); !errors.Is(docket.RunWriteError(err), docket.ErrInvalidArgument) {
		t.Fatalf("gen.InsertRuns with max attempts -1: %v, want ErrInvalidArgument", err)
	}
	if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where run_id like 'ma-gen-%' or run_id in ('ma-bad', 'ma-ok')`); n != 0 {
		t.Fatalf("%d refused runs written", n)
	}
	batch.MaxAttempts = nil
	if n, err := q.InsertRuns(ctx, batch); err != nil || n != 2 {
		t.Fatalf("gen.InsertRuns without max attempts: %d, %v", n, err)
	}
	if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where run_id like 'ma-gen-%' and max_attempts is null`); n != 2 {
		t.Fatalf("%d runs of the batch without max attempts store none, want 2", n)
	}
}

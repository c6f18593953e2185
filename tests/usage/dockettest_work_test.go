package usage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// workEnv is a TenantFair client of cap 2 on a fresh database.
type workEnv struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	client *docket.Client
}

func newDTWorkEnv(t *testing.T, defaultCap int) *workEnv {
	t.Helper()
	pool := testkit.NewPool(t)
	return &workEnv{t: t, ctx: testkit.Context(t), pool: pool, client: testkit.OpenClient(t, pool, testkit.TenantFairConfig(defaultCap))}
}

// insert inserts one run of tenant, due at wake (zero: now).
func (e *workEnv) insert(tenant, runID string, wake time.Time) {
	e.t.Helper()
	run := run(runID, tenant, "dt-graph", `{"n": 0}`)
	run.WakeAt = wake
	if _, err := e.client.InsertRun(e.ctx, run); err != nil {
		e.t.Fatalf("insert %s: %v", runID, err)
	}
}

// inspect returns the scheduling view of runID of tenant.
func (e *workEnv) inspect(tenant, runID string) docket.RunInspection {
	e.t.Helper()
	insp, err := e.client.InspectRun(e.ctx, docket.Tenant(tenant), runID)
	if err != nil {
		e.t.Fatalf("inspect %s: %v", runID, err)
	}
	return insp
}

// work runs handler on runID through dockettest.Work and fails t on a
// failure.
func (e *workEnv) work(tenant, runID string, handler docket.Handler) docket.Run {
	e.t.Helper()
	var run docket.Run
	passes(e.t, "Work "+runID, func(tb dockettest.TB) {
		run = dockettest.Work(e.ctx, tb, e.client, docket.Tenant(tenant), runID, handler)
	})
	return run
}

// never is a handler that must not run.
func never(t *testing.T) docket.Handler {
	return func(context.Context, *docket.Job) docket.Result {
		t.Error("the handler ran")
		return docket.Fail(nil)
	}
}

// Every verdict kind, worked synchronously: the handler gets the real job,
// and Work returns the run as the verdict's commit left it.
func TestDockettestWorkVerdicts(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 8)
	later := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	cases := []struct {
		name   string
		result func(ctx context.Context, job *docket.Job) docket.Result
		expect func(run docket.Run) error
	}{
		{"complete", func(ctx context.Context, job *docket.Job) docket.Result {
			if err := job.Checkpoint(ctx, 1, json.RawMessage(`{"n": 1}`)); err != nil {
				return docket.Fail(err)
			}
			return docket.Complete(json.RawMessage(`{"n": 2}`))
		}, func(run docket.Run) error {
			if run.Status != docket.StatusDone || string(run.State) != `{"n": 2}` || run.Step != 1 || run.CheckpointSeq != 2 || run.LatestCheckpointType != "complete" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"fail", func(context.Context, *docket.Job) docket.Result { return docket.Fail(errors.New("boom")) }, func(run docket.Run) error {
			if run.Status != docket.StatusFailed || run.LatestCheckpointType != "fail" || string(run.State) != `{"n": 0}` {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"panic", func(context.Context, *docket.Job) docket.Result { panic("kaboom") }, func(run docket.Run) error {
			if run.Status != docket.StatusFailed || run.LatestCheckpointType != "panic" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"retry", func(context.Context, *docket.Job) docket.Result { return docket.RetryAt(later) }, func(run docket.Run) error {
			if run.Status != docket.StatusRunning || run.Claimed() || run.WakeAt == nil || !run.WakeAt.Equal(later) || run.LatestCheckpointType != "retry" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"continue", func(context.Context, *docket.Job) docket.Result {
			return docket.Continue(4, json.RawMessage(`{"n": 4}`))
		}, func(run docket.Run) error {
			if run.Status != docket.StatusRunning || run.Claimed() || run.Step != 4 || string(run.State) != `{"n": 4}` || run.LatestCheckpointType != "continue" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"yield", func(context.Context, *docket.Job) docket.Result { return docket.Yield() }, func(run docket.Run) error {
			if run.Status != docket.StatusRunning || run.Claimed() || run.WakeAt == nil || run.LatestCheckpointType != "yield" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"wait", func(context.Context, *docket.Job) docket.Result {
			return docket.WaitExternal(json.RawMessage(`{"w": true}`))
		}, func(run docket.Run) error {
			if run.Status != docket.StatusWaiting || string(run.State) != `{"w": true}` || run.LatestCheckpointType != "wait" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
		{"no_result", func(context.Context, *docket.Job) docket.Result { return docket.Result{} }, func(run docket.Run) error {
			if run.Status != docket.StatusFailed || run.LatestCheckpointType != "no_result" {
				return fmt.Errorf("%+v", run)
			}
			return nil
		}},
	}
	for _, c := range cases {
		e.insert("acme", "dt-w-"+c.name, time.Time{})
	}
	for _, c := range cases {
		runID := "dt-w-" + c.name
		var saw *docket.Job
		run := e.work("acme", runID, func(ctx context.Context, job *docket.Job) docket.Result {
			saw = job
			return c.result(ctx, job)
		})
		if saw == nil || saw.RunID != runID || saw.Scope != docket.Tenant("acme") || saw.GraphID != "dt-graph" || saw.Attempt != 1 {
			t.Errorf("%s: the handler saw %+v", c.name, saw)
		}
		if err := c.expect(run); err != nil {
			t.Errorf("%s: Work returned %v", c.name, err)
		}
		if c.name != "continue" && c.name != "yield" {
			if insp := e.inspect("acme", runID); insp.AdmittedAt != nil {
				t.Errorf("%s: the run keeps an admission after its verdict: %+v", c.name, insp)
			}
		}
	}
}

// Work leases only the run under test: another tenant's due runs and the
// tenant's admitted-ready run stay as they were.
func TestDockettestWorkClaimsOnlyThatRun(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	e.insert("acme", "dt-o-first", time.Time{})
	e.insert("beta", "dt-o-beta", time.Time{})
	// dt-o-first becomes admitted-ready (a yield keeps its admission).
	e.work("acme", "dt-o-first", func(context.Context, *docket.Job) docket.Result { return docket.Yield() })
	e.insert("acme", "dt-o-target", time.Time{})
	run := e.work("acme", "dt-o-target", func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) })
	if run.Status != docket.StatusDone {
		t.Fatalf("target %+v", run)
	}
	if insp := e.inspect("acme", "dt-o-first"); insp.State != docket.AdmissionAdmittedReady || insp.ClaimAttempts != 0 {
		t.Fatalf("the admitted-ready run was touched: %+v", insp)
	}
	if insp := e.inspect("beta", "dt-o-beta"); insp.State != docket.AdmissionQueued || insp.ClaimAttempts != 0 {
		t.Fatalf("another tenant's run was touched: %+v", insp)
	}
}

// Work fails with the reason the engine would not lease the run now, and
// the run is exactly as before.
func TestDockettestWorkRefusals(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 1)
	never := never(t)
	refused := func(what, tenant, runID, want string) {
		t.Helper()
		before := e.inspect(tenant, runID)
		fails(t, what, want, func(tb dockettest.TB) {
			if run := dockettest.Work(e.ctx, tb, e.client, docket.Tenant(tenant), runID, never); run.RunID != "" {
				t.Errorf("%s: Work returned %+v", what, run)
			}
		})
		after := e.inspect(tenant, runID)
		before.ObservedAt, after.ObservedAt = time.Time{}, time.Time{}
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("%s changed the run:\nbefore %+v\nafter  %+v", what, before, after)
		}
	}

	// acme's only slot is held by a claim, so its queued run is capped.
	e.insert("acme", "dt-r-holder", time.Time{})
	res, err := e.client.ClaimDue(e.ctx, docket.ClaimRequest{Now: time.Now(), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "dt-r-holder" {
		t.Fatalf("claim: %v %+v", err, res)
	}
	claimedAt := res.Leases[0].ClaimedAt
	e.insert("acme", "dt-r-capped", time.Time{})
	refused("a capped tenant's queued run", "acme", "dt-r-capped",
		`dockettest: Work: docket: run "dt-r-capped" is queued behind its tenant's cap: tenant:acme holds 1 of 1 admissions (default cap)`)
	refused("a run another holder claimed", "acme", "dt-r-holder",
		fmt.Sprintf(`dockettest: Work: docket: run "dt-r-holder" is claimed by another holder (claimed at %s, within the 30s claim TTL)`,
			claimedAt.UTC().Format(time.RFC3339Nano)))

	// beta has room, but an older queued run goes first.
	e.insert("beta", "dt-r-older", time.Time{})
	e.insert("beta", "dt-r-younger", time.Time{})
	refused("a run behind an older queued run", "beta", "dt-r-younger",
		`dockettest: Work: docket: run "dt-r-younger" is not at the head of its tenant's FIFO: 1 older queued run(s) of tenant:beta are promoted first`)

	wake := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	e.insert("gamma", "dt-r-future", wake)
	failsWith(t, "a run not yet due",
		fmt.Sprintf(`dockettest: Work: docket: run "dt-r-future" is not due until %s (the database clock reads `, wake.UTC().Format(time.RFC3339Nano)),
		func(tb dockettest.TB) {
			dockettest.Work(e.ctx, tb, e.client, docket.Tenant("gamma"), "dt-r-future", never)
		})

	e.insert("delta", "dt-r-waiting", time.Time{})
	e.work("delta", "dt-r-waiting", func(context.Context, *docket.Job) docket.Result { return docket.WaitExternal(nil) })
	refused("a waiting run", "delta", "dt-r-waiting",
		`dockettest: Work: docket: run "dt-r-waiting" is waiting for an external event (status waiting); MutateRun resumes it`)

	e.insert("delta", "dt-r-done", time.Time{})
	e.work("delta", "dt-r-done", func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) })
	refused("a finished run", "delta", "dt-r-done", `dockettest: Work: docket: run "dt-r-done" is finished (status done)`)

	fails(t, "a missing run", `dockettest: Work: docket: not found: run "dt-r-missing"`, func(tb dockettest.TB) {
		dockettest.Work(e.ctx, tb, e.client, docket.Tenant("delta"), "dt-r-missing", never)
	})
	fails(t, "another tenant's run", `dockettest: Work: docket: not found: run "dt-r-done"`, func(tb dockettest.TB) {
		dockettest.Work(e.ctx, tb, e.client, docket.Tenant("acme"), "dt-r-done", never)
	})
	fails(t, "no handler", `dockettest: Work: docket: invalid argument: Work needs a client and a handler`, func(tb dockettest.TB) {
		dockettest.Work(e.ctx, tb, e.client, docket.Tenant("delta"), "dt-r-done", nil)
	})

	// Once the holder's verdict frees the slot, the capped run is worked.
	if _, err := e.client.Commit(e.ctx, docket.CommitRequest{Holder: res.Leases[0].Holder(), ExpectedSeq: res.Leases[0].CheckpointSeq,
		Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatal(err)
	}
	if run := e.work("acme", "dt-r-capped", func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }); run.Status != docket.StatusDone {
		t.Fatalf("the formerly capped run: %+v", run)
	}
}

// Work under Legacy, tenantless.
func TestDockettestWorkLegacy(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, testkit.NewPool(t), testkit.LegacyConfig())
	for _, id := range []string{"dt-l-1", "dt-l-2"} {
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: id, GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var run docket.Run
	passes(t, "Work the younger run", func(tb dockettest.TB) {
		run = dockettest.Work(ctx, tb, client, docket.Tenantless, "dt-l-2", func(context.Context, *docket.Job) docket.Result {
			return docket.Complete(json.RawMessage(`{"ok": true}`))
		})
	})
	if run.Status != docket.StatusDone || string(run.State) != `{"ok": true}` {
		t.Fatalf("%+v", run)
	}
	older, err := client.InspectRun(ctx, docket.Tenantless, "dt-l-1")
	if err != nil || older.ClaimAttempts != 0 || older.ClaimedAt != nil {
		t.Fatalf("the older run was touched: %v %+v", err, older)
	}
}

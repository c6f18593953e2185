package usage

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// claimLease inserts runID of tenant and claims it with ClaimDue.
func claimLease(t *testing.T, e *workEnv, tenant, runID string) docket.Lease {
	t.Helper()
	e.insert(tenant, runID, time.Time{})
	res, err := e.client.ClaimDue(e.ctx, docket.ClaimRequest{Now: time.Now(), Limit: 1, ClaimTTL: docket.DefaultClaimTTL,
		MaxClaimAttempts: math.MaxInt32})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Leases) != 1 || res.Leases[0].RunID != runID {
		t.Fatalf("claim = %+v, want a lease of %s", res, runID)
	}
	return res.Leases[0]
}

// A lease the application claimed itself is worked by WorkLease as a
// Worker works it: the handler gets the claimed run, the verdict is
// committed fenced on the claim, and the caller's OnEvent hears both.
func TestWorkLeaseWorksAnOwnClaim(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	lease := claimLease(t, e, "acme", "wl-1")
	var kinds []docket.WorkerEventKind
	var seen *docket.Job
	run, err := e.client.WorkLease(e.ctx, lease, docket.WorkerConfig{
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			seen = job
			return docket.Complete(json.RawMessage(`{"n": 1}`))
		},
		OnEvent: func(ev docket.WorkerEvent) { kinds = append(kinds, ev.Kind) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == nil || seen.RunID != "wl-1" || seen.Attempt != 1 || string(seen.State) != `{"n": 0}` {
		t.Fatalf("the handler saw %+v", seen)
	}
	if run.Status != docket.StatusDone || string(run.State) != `{"n": 1}` || run.ClaimedAt != nil {
		t.Fatalf("WorkLease returned %+v", run)
	}
	if want := []docket.WorkerEventKind{docket.EventHandlerStarted, docket.EventVerdict}; !slices.Equal(kinds, want) {
		t.Fatalf("OnEvent heard %v, want %v", kinds, want)
	}
}

// A configuration a Worker refuses is refused before anything is read or
// written: the claim stays as it was.
func TestWorkLeaseRefusesAnInvalidConfig(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	lease := claimLease(t, e, "acme", "wl-cfg")
	for name, cfg := range map[string]docket.WorkerConfig{
		"no handler": {},
		"bad retry":  {Handler: never(t), Retry: docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Jitter: 2}},
	} {
		if _, err := e.client.WorkLease(e.ctx, lease, cfg); !errors.Is(err, docket.ErrInvalidConfig) {
			t.Errorf("%s: WorkLease error = %v, want ErrInvalidConfig", name, err)
		}
	}
	insp := e.inspect("acme", "wl-cfg")
	if insp.Status != docket.StatusRunning || insp.ClaimedAt == nil || !insp.ClaimedAt.Equal(lease.ClaimedAt.Truncate(time.Microsecond)) {
		t.Fatalf("after the refusals the run is %+v, want it still claimed by the lease", insp)
	}
}

// A lease whose claim is gone (an operator cancelled the run) never
// reaches the handler, and WorkLease says the run no longer matches it.
func TestWorkLeaseOfACancelledRun(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	lease := claimLease(t, e, "acme", "wl-gone")
	if _, err := e.client.Cancel(e.ctx, docket.Tenant("acme"), "wl-gone"); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.WorkLease(e.ctx, lease, docket.WorkerConfig{Handler: never(t)})
	const want = `docket: WorkLease: run "wl-gone" does not match its lease (read as gone, or with another holder or fence); its claim was released`
	if err == nil || err.Error() != want {
		t.Fatalf("WorkLease error = %v, want %q", err, want)
	}
	if insp := e.inspect("acme", "wl-gone"); insp.Status != docket.StatusCancelled {
		t.Fatalf("the run is %s, want cancelled", insp.Status)
	}
}

// A verdict the fence refuses is an error that wraps the store's answer.
func TestWorkLeaseReportsAFencedVerdict(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	lease := claimLease(t, e, "acme", "wl-fenced")
	_, err := e.client.WorkLease(e.ctx, lease, docket.WorkerConfig{
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if _, err := e.client.Cancel(ctx, job.Scope, job.RunID); err != nil {
				t.Error(err)
			}
			return docket.Complete(nil)
		},
	})
	if !errors.Is(err, docket.ErrRunCancelled) {
		t.Fatalf("WorkLease error = %v, want ErrRunCancelled", err)
	}
}

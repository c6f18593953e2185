package lifecycle

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// phaseCase is one run of the phase scenario and the phase it must read as.
type phaseCase struct {
	tenant, runID string
	want          docket.RunPhase
}

// phaseScenario builds one run of every kind under TenantFair at cap 1,
// each through the calls that make such runs, and returns them. Every claim
// is made while its run is the only due one, so each lease is the expected
// run.
func phaseScenario(t *testing.T) (*testkit.RunStore, []phaseCase) {
	t.Helper()
	s := testkit.NewRunStore(t, 1)
	ctx := testkit.Context(t)
	commit := func(l testkit.RunStoreLease, req docket.CommitRequest) {
		t.Helper()
		req.Holder, req.ExpectedSeq = l.Holder, l.Seq
		if _, err := s.Client.Commit(ctx, req); err != nil {
			t.Fatalf("commit %s: %v", l.Holder.RunID, err)
		}
	}
	later := func() time.Time { return s.DbNow().Add(time.Hour) }
	failure := &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: "db down\nat step 2"}

	// Retrying: a failed attempt released for later, as a Worker's retry
	// verdict does.
	s.Insert("retry", "t1")
	commit(s.Claim("retry", "t1"), docket.CommitRequest{Disposition: docket.ReleaseAt(later()),
		Attempt: docket.AttemptCount, Failure: failure})
	// Scheduled after a failure: the same retry, then an operator moved its
	// wake time, so the failed attempt is no longer the last write.
	s.Insert("moved", "m1")
	commit(s.Claim("moved", "m1"), docket.CommitRequest{Disposition: docket.ReleaseAt(later()),
		Attempt: docket.AttemptCount, Failure: failure})
	if _, err := s.Client.MutateRun(ctx, docket.Tenant("moved"), "m1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusRunning, WakeAt: later().Add(time.Hour)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// Scheduled after an abandon, which writes no error entry, following a
	// failed attempt that does.
	s.Insert("abandon", "ab1")
	l := s.Claim("abandon", "ab1")
	commit(l, docket.CommitRequest{Disposition: docket.RetainClaim(), Attempt: docket.AttemptCount, Failure: failure})
	if _, err := s.Client.AbandonClaim(ctx, docket.AbandonRequest{Holder: l.Holder, ExpectedSeq: l.Seq + 1, RetryAt: later()}); err != nil {
		t.Fatal(err)
	}
	// Waiting: released to an external event.
	s.Insert("wait", "w1")
	commit(s.Claim("wait", "w1"), docket.CommitRequest{Disposition: docket.ReleaseExternal()})
	// Poisoned: its abandon limit reached.
	s.Insert("poison", "p1")
	l = s.Claim("poison", "p1")
	if res, err := s.Client.AbandonClaim(ctx, docket.AbandonRequest{Holder: l.Holder, ExpectedSeq: l.Seq, MaxAbandons: 1}); err != nil || res.Outcome != docket.AbandonPoisoned {
		t.Fatalf("abandon p1: %+v, %v", res, err)
	}
	// Done and failed: terminal commits.
	s.Insert("fin", "d1")
	commit(s.Claim("fin", "d1"), docket.CommitRequest{Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	s.Insert("fin", "f1")
	commit(s.Claim("fin", "f1"), docket.CommitRequest{Disposition: docket.ReleaseTerminal(docket.StatusFailed),
		Attempt: docket.AttemptCount, Failure: failure})
	s.Insert("again", "r1")
	commit(s.Claim("again", "r1"), docket.CommitRequest{Disposition: docket.ReleaseTerminal(docket.StatusFailed),
		Attempt: docket.AttemptCount, Failure: failure})
	// Executing, and queued behind it under the cap of 1.
	s.Insert("acme", "e1")
	s.Claim("acme", "e1")
	// Ready: released at once by its holder, which keeps the admission. It
	// is the last claim: a ready run is what the next claim takes.
	s.Insert("ready", "y1")
	commit(s.Claim("ready", "y1"), docket.CommitRequest{Disposition: docket.ReleaseImmediate()})
	s.Insert("acme", "q1")
	// Queued after an operator's retry: the retry entry is the newest, the
	// run is due and its admission is gone.
	if _, err := s.Client.RetryRun(ctx, docket.Tenant("again"), "r1", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	// Cancelled while queued.
	s.Insert("acme", "c1")
	if _, err := s.Client.Cancel(ctx, docket.Tenant("acme"), "c1"); err != nil {
		t.Fatal(err)
	}
	// Paused: a queued run of a tenant an operator paused.
	s.Insert("hold", "h1")
	if _, err := s.Client.PauseTenant(ctx, docket.Tenant("hold"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Scheduled from its insert: due in two hours.
	if _, err := s.Client.InsertRun(ctx, docket.NewRun{RunID: "s1", Scope: docket.Tenant("acme"), GraphID: "graph", GraphHash: "v1",
		State: []byte(`{}`), WakeAt: s.DbNow().Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return s, []phaseCase{
		{"acme", "q1", docket.PhaseQueued},
		{"again", "r1", docket.PhaseQueued},
		{"ready", "y1", docket.PhaseReady},
		{"acme", "e1", docket.PhaseExecuting},
		{"retry", "t1", docket.PhaseRetrying},
		{"moved", "m1", docket.PhaseScheduled},
		{"hold", "h1", docket.PhasePaused},
		{"abandon", "ab1", docket.PhaseScheduled},
		{"acme", "s1", docket.PhaseScheduled},
		{"wait", "w1", docket.PhaseWaiting},
		{"poison", "p1", docket.PhasePoisoned},
		{"fin", "d1", docket.PhaseDone},
		{"fin", "f1", docket.PhaseFailed},
		{"acme", "c1", docket.PhaseCancelled},
	}
}

// Every kind of run reads as its phase through FetchRun, InspectRun and
// ListRuns, and the scenario meets every phase RunPhases lists, so a phase
// the function derives but the constants lack, or the reverse, fails here.
func TestRunPhaseOfEveryKindOfRun(t *testing.T) {
	t.Parallel()
	s, cases := phaseScenario(t)
	ctx := testkit.Context(t)
	seen := map[docket.RunPhase]bool{}
	for _, c := range cases {
		scope := docket.Tenant(c.tenant)
		run, err := s.Client.FetchRun(ctx, scope, c.runID)
		if err != nil {
			t.Fatal(err)
		}
		if run.Phase != c.want {
			t.Errorf("FetchRun %s: phase %q, want %q", c.runID, run.Phase, c.want)
		}
		ins, err := s.Client.InspectRun(ctx, scope, c.runID)
		if err != nil {
			t.Fatal(err)
		}
		if ins.Phase != c.want {
			t.Errorf("InspectRun %s: phase %q, want %q", c.runID, ins.Phase, c.want)
		}
		page, err := s.Client.ListRuns(ctx, docket.ListRunsRequest{Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(page.Runs, func(r docket.Run) bool { return r.RunID == c.runID })
		if i < 0 || page.Runs[i].Phase != c.want {
			t.Errorf("ListRuns of %s: %+v, want %s in phase %s", c.tenant, page.Runs, c.runID, c.want)
		}
		seen[c.want] = true
	}
	for _, p := range docket.RunPhases() {
		if !seen[p] {
			t.Errorf("no run of the scenario is %s", p)
		}
	}
	if len(seen) != len(docket.RunPhases()) {
		t.Errorf("the scenario meets %d phases, RunPhases lists %d", len(seen), len(docket.RunPhases()))
	}
}

// The phase filter keeps exactly the runs of that phase, of one scope
// (ListRuns) or of every scope (ListDomainRuns), and pages through them; an
// unknown phase is ErrInvalidArgument.
func TestRunPhaseFilter(t *testing.T) {
	t.Parallel()
	s, cases := phaseScenario(t)
	ctx := testkit.Context(t)
	ids := func(page docket.RunPage) []string {
		var out []string
		for _, r := range page.Runs {
			if r.Phase == "" {
				t.Errorf("listed run %s has no phase", r.RunID)
			}
			out = append(out, r.RunID)
		}
		return out
	}
	for _, p := range docket.RunPhases() {
		var want []string
		page, err := s.Client.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Phase: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.want == p {
				want = append(want, c.runID)
			}
		}
		got := ids(page)
		if !sameSet(got, want) {
			t.Errorf("ListDomainRuns phase %s: %v, want %v", p, got, want)
		}
	}
	// acme holds one run of each of four phases.
	for p, want := range map[docket.RunPhase]string{
		docket.PhaseQueued: "q1", docket.PhaseExecuting: "e1", docket.PhaseCancelled: "c1", docket.PhaseScheduled: "s1", docket.PhaseReady: "",
	} {
		page, err := s.Client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("acme"), Phase: p})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(page)
		if want == "" && len(got) != 0 || want != "" && !slices.Equal(got, []string{want}) {
			t.Errorf("ListRuns acme phase %s: %v, want %q", p, got, want)
		}
	}
	// Paging with a phase filter: the three scheduled runs, one a page.
	var got []string
	req := docket.ListDomainRunsRequest{Phase: docket.PhaseScheduled, Limit: 1}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than three pages: %v", got)
		}
		page, err := s.Client.ListDomainRuns(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if page.Next == nil {
			break
		}
		req.After = page.Next
	}
	if !slices.Equal(got, []string{"s1", "ab1", "m1"}) {
		t.Errorf("scheduled, paged newest first: %v, want [s1 ab1 m1]", got)
	}

	// An unknown phase reads nothing.
	for _, bad := range []docket.RunPhase{"running", "Queued", "admitted-ready"} {
		if _, err := s.Client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("acme"), Phase: bad}); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("ListRuns phase %q: %v, want ErrInvalidArgument", bad, err)
		}
		if _, err := s.Client.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Phase: bad}); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("ListDomainRuns phase %q: %v, want ErrInvalidArgument", bad, err)
		}
	}
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// The phases the function's CASE can return are exactly RunPhases: the
// literal phases of its branches plus the terminal statuses its first
// branch returns as they are.
func TestRunPhaseConstantsMatchTheFunction(t *testing.T) {
	t.Parallel()
	// db/functions holds the current version only.
	sources, err := filepath.Glob(filepath.Join(testkit.ModuleRoot(t), "db", "functions", "docket_run_phase_v*.sql"))
	if err != nil || len(sources) != 1 {
		t.Fatalf("sources of docket_run_phase: %q, %v", sources, err)
	}
	src, err := os.ReadFile(sources[0])
	if err != nil {
		t.Fatal(err)
	}
	var fromSQL []string
	for _, m := range regexp.MustCompile(`(?:then|else) '([a-z_]+)'`).FindAllStringSubmatch(string(src), -1) {
		fromSQL = append(fromSQL, m[1])
	}
	passThrough := regexp.MustCompile(`when r\.status in \(([^)]*)\) then r\.status`).FindStringSubmatch(string(src))
	if passThrough == nil {
		t.Fatalf("the function has no branch returning the status as it is:\n%s", src)
	}
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(passThrough[1], -1) {
		fromSQL = append(fromSQL, m[1])
	}
	var consts []string
	for _, p := range docket.RunPhases() {
		consts = append(consts, string(p))
	}
	if !sameSet(fromSQL, consts) || len(fromSQL) != len(consts) {
		t.Fatalf("the function returns %v, RunPhases lists %v", fromSQL, consts)
	}
}

// The Runs that writes return carry the phase their own statement derived,
// as reads do, and so does the run MutateRun's decide function receives.
func TestRunPhaseOfWhatWritesReturn(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	expect := func(what string, got, want docket.RunPhase) {
		t.Helper()
		if got != want {
			t.Errorf("%s: phase %q, want %q", what, got, want)
		}
	}
	inserted, err := s.Client.InsertRun(ctx, docket.NewRun{RunID: "w1", Scope: docket.Tenant("acme"), GraphID: "graph", GraphHash: "v1", State: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	expect("InsertRun", inserted.Phase, docket.PhaseQueued)
	lease := s.Claim("acme", "w1")
	kept, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, State: []byte(`{}`),
		Disposition: docket.RetainClaim()})
	if err != nil {
		t.Fatal(err)
	}
	expect("Commit that keeps the claim", kept.Phase, docket.PhaseExecuting)
	later, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: kept.CheckpointSeq, Step: 2, State: []byte(`{}`),
		Disposition: docket.ReleaseAt(s.DbNow().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	expect("Commit released for later", later.Phase, docket.PhaseScheduled)
	var decided docket.RunPhase
	cancelled, err := s.Client.MutateRun(ctx, docket.Tenant("acme"), "w1", func(r docket.Run) (docket.Mutation, error) {
		decided = r.Phase
		return docket.Mutation{Status: docket.StatusCancelled}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	expect("the run MutateRun decides on", decided, docket.PhaseScheduled)
	expect("MutateRun", cancelled.Run.Phase, docket.PhaseCancelled)
	retried, err := s.Client.RetryRun(ctx, docket.Tenant("acme"), "w1", docket.RetryRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expect("RetryRun", retried.Phase, docket.PhaseQueued)
	if _, err := s.Client.PauseTenant(ctx, docket.Tenant("acme"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	paused, err := s.Client.InsertRun(ctx, docket.NewRun{RunID: "w2", Scope: docket.Tenant("acme"), GraphID: "graph", GraphHash: "v1", State: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	expect("InsertRun of a paused tenant", paused.Phase, docket.PhasePaused)
}

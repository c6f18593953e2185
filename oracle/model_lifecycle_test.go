package oracle

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// claimedRun inserts one run in scope a and claims it (promotion at 10).
func claimedRun(t *testing.T) (*Model, Outcome) {
	t.Helper()
	m := newTestModel(t, 4)
	insert(t, m, "a", "r1", at(0))
	res := claim(t, m, at(10), 1, 5, PreferNone)
	if len(res.Outcomes) != 1 {
		t.Fatalf("setup claim = %+v", res)
	}
	return m, res.Outcomes[0]
}

func TestLifecycleMarker(t *testing.T) {
	now := at(20)
	tests := []struct {
		name       string
		op         func(m *Model, o Outcome) error
		claimed    bool
		admitted   bool
		status     Status
		wake       bool
		unfinished int
	}{
		{"refresh", func(m *Model, o Outcome) error { return m.RefreshClaim(o.RunID, o.Token, now) }, true, true, StatusRunning, false, 1},
		{"release", func(m *Model, o Outcome) error { _, err := m.ReleaseClaim(o.RunID, o.Token, now); return err }, false, true, StatusRunning, true, 1},
		{"commit retain", func(m *Model, o Outcome) error {
			return m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: RetainClaim}, now)
		}, true, true, StatusRunning, false, 1},
		{"commit yield", func(m *Model, o Outcome) error {
			return m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseImmediate}, now)
		}, false, true, StatusRunning, true, 1},
		{"commit release at", func(m *Model, o Outcome) error {
			return m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseAt, At: at(99)}, now)
		}, false, false, StatusRunning, true, 1},
		{"commit external", func(m *Model, o Outcome) error {
			return m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseExternal}, now)
		}, false, false, StatusWaiting, false, 1},
		{"commit terminal", func(m *Model, o Outcome) error {
			return m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusFailed}, now)
		}, false, false, StatusFailed, false, 0},
		{"abandon", func(m *Model, o Outcome) error {
			return m.AbandonClaim(o.RunID, o.Token, o.CheckpointSeq, now, at(30), 3)
		}, false, false, StatusRunning, true, 1},
		{"signal", func(m *Model, o Outcome) error { return m.Signal(o.RunID, now) }, false, false, StatusRunning, true, 1},
		{"cancel", func(m *Model, o Outcome) error { return m.Cancel(o.RunID, now) }, false, false, StatusCancelled, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, o := claimedRun(t)
			if err := tc.op(m, o); err != nil {
				t.Fatalf("op: %v", err)
			}
			r := mustRun(t, m, o.RunID)
			if r.Claimed() != tc.claimed || r.Admitted != tc.admitted || r.Status != tc.status || r.HasWake != tc.wake {
				t.Fatalf("run = %+v", r)
			}
			if tc.admitted && !r.AdmittedAt.Equal(at(10)) {
				t.Fatalf("marker moved: %v", r.AdmittedAt)
			}
			if p, _ := m.Partition("a"); p.Unfinished != tc.unfinished {
				t.Fatalf("unfinished = %d, want %d", p.Unfinished, tc.unfinished)
			}
		})
	}
}

func TestLifecycleCommitResetsCounters(t *testing.T) {
	m, o := claimedRun(t)
	if err := m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseImmediate}, at(11)); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, m, "r1")
	if r.Attempts != 0 || r.Abandons != 0 || r.CheckpointSeq != 1 || !r.WakeAt.Equal(at(11)) {
		t.Fatalf("run = %+v", r)
	}
	// RefreshClaim and RetainClaim only move claimed_at forward.
	o = claim(t, m, at(12), 1, 5, PreferNone).Outcomes[0]
	if err := m.RefreshClaim("r1", o.Token, at(5)); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, m, "r1"); !r.ClaimedAt.Equal(at(12)) {
		t.Fatalf("claimed_at moved back: %v", r.ClaimedAt)
	}
}

func TestLifecycleFences(t *testing.T) {
	m, o := claimedRun(t)
	now := at(20)
	stale := []struct {
		name string
		op   func() error
		want error
	}{
		{"refresh", func() error { return m.RefreshClaim("r1", "token-x", now) }, ErrClaimLost},
		{"commit token", func() error {
			return m.Commit("r1", "token-x", o.CheckpointSeq, Schedule{Kind: RetainClaim}, now)
		}, ErrClaimLost},
		{"commit seq", func() error {
			return m.Commit("r1", o.Token, o.CheckpointSeq+1, Schedule{Kind: RetainClaim}, now)
		}, ErrStaleFence},
		{"abandon token", func() error { return m.AbandonClaim("r1", "", 0, now, now, 1) }, ErrClaimLost},
		{"abandon seq", func() error { return m.AbandonClaim("r1", o.Token, 7, now, now, 1) }, ErrStaleFence},
	}
	before := mustRun(t, m, "r1")
	if ok, err := m.ReleaseClaim("r1", "token-x", now); ok || err != nil {
		t.Fatalf("stale release = %v, %v, want false, nil", ok, err)
	}
	for _, tc := range stale {
		err := tc.op()
		var fe *FenceError
		if !errors.Is(err, tc.want) || !errors.As(err, &fe) || fe.RunID != "r1" {
			t.Errorf("%s: err = %v, want *FenceError(%v)", tc.name, err, tc.want)
		}
	}
	if after := mustRun(t, m, "r1"); after != before {
		t.Fatalf("stale writes changed the run: %+v -> %+v", before, after)
	}
	// A stolen claim fences the old holder.
	res := claimCutoff(t, m, at(100), at(50), 1, 5, PreferExpired)
	if len(res.Outcomes) != 1 || res.Outcomes[0].Token == o.Token {
		t.Fatalf("steal = %+v", res)
	}
	if err := m.Commit("r1", o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusDone}, at(101)); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("old holder commit err = %v", err)
	}
	// Releasing again is an idempotent no-op.
	if ok, err := m.ReleaseClaim("r1", res.Outcomes[0].Token, at(102)); err != nil || !ok {
		t.Fatalf("release = %v, %v", ok, err)
	}
	if ok, err := m.ReleaseClaim("r1", res.Outcomes[0].Token, at(103)); err != nil || ok {
		t.Fatalf("second release = %v, %v, want false, nil", ok, err)
	}
	if _, err := m.ReleaseClaim("nope", "x", at(103)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("release of a missing run err = %v", err)
	}
	if r := mustRun(t, m, "r1"); !r.WakeAt.Equal(at(102)) {
		t.Fatalf("idempotent release moved wake: %v", r.WakeAt)
	}
}

func TestLifecycleAbandonPoison(t *testing.T) {
	m, o := claimedRun(t)
	if err := m.AbandonClaim("r1", o.Token, o.CheckpointSeq, at(11), at(12), 2); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, m, "r1"); r.Poisoned || r.Abandons != 1 || !r.WakeAt.Equal(at(12)) || r.Admitted || r.Attempts != 1 {
		t.Fatalf("after first abandon: %+v", r)
	}
	o = claim(t, m, at(13), 1, 5, PreferNone).Outcomes[0]
	if o.Disposition != OutcomeQueuedPromotion {
		t.Fatalf("re-claim after abandon = %+v", o)
	}
	if err := m.AbandonClaim("r1", o.Token, o.CheckpointSeq, at(14), at(15), 2); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, m, "r1")
	if !r.Poisoned || r.PoisonReason != PoisonMaxClaimAbandons || r.HasWake || r.Claimed() || r.Admitted || r.Status != StatusRunning {
		t.Fatalf("after limit: %+v", r)
	}
	if p, _ := m.Partition("a"); p.Unfinished != 1 {
		t.Fatalf("poisoned running row not counted: %+v", p)
	}
	if err := m.Signal("r1", at(16)); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("signal on poisoned run err = %v", err)
	}
	if c := m.Clone(); c.Cancel("r1", at(16)) != nil {
		t.Fatal("cancel of a poisoned run failed")
	} else if r := mustRun(t, c, "r1"); r.Poisoned || r.Status != StatusCancelled {
		t.Fatalf("cancelled poisoned run = %+v", r)
	}
	if err := m.RetryPoisonedRun("r1", at(17)); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, m, "r1")
	if r.Poisoned || r.Admitted || !r.WakeAt.Equal(at(17)) || r.Attempts != 0 || r.Abandons != 0 {
		t.Fatalf("after retry: %+v", r)
	}
	if c := m.Counts("a", at(17)); c.Queued != 1 {
		t.Fatalf("retried run not queued: %+v", c)
	}
	if err := m.RetryPoisonedRun("r1", at(18)); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("retry of healthy run err = %v", err)
	}
}

func TestLifecycleMutateRun(t *testing.T) {
	m, _ := claimedRun(t)
	if err := m.MutateRun("r1", StatusWaiting, at(0), at(20)); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, m, "r1"); r.Status != StatusWaiting || r.Claimed() || r.Admitted || r.HasWake {
		t.Fatalf("waiting run = %+v", r)
	}
	if err := m.MutateRun("r1", StatusRunning, at(40), at(21)); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, m, "r1"); !r.WakeAt.Equal(at(40)) || r.Admitted {
		t.Fatalf("resumed run = %+v", r)
	}
	if err := m.MutateRun("r1", "paused", at(0), at(22)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("unknown status err = %v", err)
	}
	if err := m.MutateRun("r1", StatusDone, at(0), at(22)); err != nil {
		t.Fatal(err)
	}
	if err := m.MutateRun("r1", StatusRunning, at(0), at(23)); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("mutating a terminal run err = %v", err)
	}
	if p, _ := m.Partition("a"); p.Unfinished != 0 {
		t.Fatalf("unfinished = %d", p.Unfinished)
	}
}

func TestLifecycleWake(t *testing.T) {
	m, o := claimedRun(t)
	if err := m.Wake("r1", at(11)); !errors.Is(err, ErrInvalidState) {
		t.Fatalf("wake of running run err = %v", err)
	}
	if err := m.Commit("r1", o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseExternal}, at(11)); err != nil {
		t.Fatal(err)
	}
	if c := m.Counts("a", at(11)); c.Unfinished != 1 || c.Admitted != 0 {
		t.Fatalf("waiting counts = %+v", c)
	}
	if err := m.Wake("r1", at(12)); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, m, "r1")
	if r.Status != StatusRunning || r.Admitted || !r.WakeAt.Equal(at(12)) {
		t.Fatalf("woken run = %+v", r)
	}
	if o := claim(t, m, at(13), 1, 5, PreferNone).Outcomes[0]; o.Disposition != OutcomeQueuedPromotion {
		t.Fatalf("woken run was not queued: %+v", o)
	}
}

func TestLifecycleInsertAndAdmin(t *testing.T) {
	m := newTestModel(t, 3)
	insert(t, m, "", "t1", at(0)) // tenantless is an ordinary partition
	insert(t, m, "b", "b1", at(0))
	if err := m.InsertRun("b", "b1", at(0)); !errors.Is(err, ErrDuplicateRun) {
		t.Fatalf("duplicate insert err = %v", err)
	}
	if err := m.InsertRun("b", "", at(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("empty run id err = %v", err)
	}
	if err := m.SetOverride("c", 2); err != nil {
		t.Fatal(err)
	}
	want := []Partition{{Scope: "", Position: 1, Unfinished: 1}, {Scope: "b", Position: 2, Unfinished: 1}, {Scope: "c", Position: 3, Override: 2}}
	got := m.Partitions()
	if len(got) != len(want) {
		t.Fatalf("partitions = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("partition %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if ring := m.Ring(); len(ring) != 2 || ring[1] != "" || ring[2] != "b" {
		t.Fatalf("ring = %v", ring)
	}
	for _, c := range []int{0, -1, MaxCap + 1} {
		if err := m.SetDefaultCap(c); !errors.Is(err, ErrInvalidCap) {
			t.Errorf("SetDefaultCap(%d) err = %v", c, err)
		}
		if err := m.SetOverride("b", c); !errors.Is(err, ErrInvalidCap) {
			t.Errorf("SetOverride(%d) err = %v", c, err)
		}
	}
	if _, err := NewModel(0); !errors.Is(err, ErrInvalidCap) {
		t.Fatalf("NewModel(0) err = %v", err)
	}
	if err := m.SetDefaultCap(MaxCap); err != nil || m.DefaultCap() != MaxCap || m.EffectiveCap("c") != 2 {
		t.Fatalf("SetDefaultCap(MaxCap) = %v", err)
	}
	if err := m.ResetOverride("zz"); err != nil {
		t.Fatalf("ResetOverride(unknown): %v", err)
	}
	if p, ok := m.Partition("zz"); !ok || p.Position != 4 || p.Override != 0 {
		t.Fatalf("ResetOverride did not create the partition: %+v", p)
	}
	if err := m.Signal("nope", at(0)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Signal(unknown) err = %v", err)
	}
	if err := m.Commit("b1", "x", 0, Schedule{Kind: ReleaseTerminal, Status: StatusRunning}, at(0)); !errors.Is(err, ErrClaimLost) {
		t.Fatalf("commit without claim err = %v", err)
	}
}

func TestLifecycleInsertRunsBatch(t *testing.T) {
	m := newTestModel(t, 3)
	insert(t, m, "m", "m0", at(0))
	batch := []NewRun{{Scope: "z", RunID: "z1", WakeAt: at(5)}, {Scope: "m", RunID: "m1", WakeAt: at(5)},
		{Scope: "a", RunID: "a1", WakeAt: at(5)}, {Scope: "z", RunID: "z2", WakeAt: at(5)}}
	for _, bad := range [][]NewRun{
		{{Scope: "q", RunID: "q1"}, {Scope: "q", RunID: "q1"}},
		{{Scope: "q", RunID: "q1"}, {Scope: "m", RunID: "m0"}},
		{{Scope: "q", RunID: ""}},
	} {
		if err := m.InsertRuns(bad); err == nil {
			t.Fatalf("InsertRuns(%+v) accepted", bad)
		}
	}
	if len(m.Partitions()) != 1 || len(m.Runs()) != 1 {
		t.Fatalf("a refused batch changed the model: %+v", m.Partitions())
	}
	if err := m.InsertRuns(batch); err != nil {
		t.Fatal(err)
	}
	// New partitions take positions in scope-key order; runs take ids in
	// input order.
	var scopes []string
	for _, p := range m.Partitions() {
		scopes = append(scopes, fmt.Sprintf("%s@%d/%d", p.Scope, p.Position, p.Unfinished))
	}
	if got := strings.Join(scopes, " "); got != "m@1/2 a@2/1 z@3/2" {
		t.Fatalf("partitions = %s", got)
	}
	var ids []string
	for _, r := range m.Runs() {
		ids = append(ids, fmt.Sprintf("%s#%d", r.RunID, r.ID))
	}
	if got := strings.Join(ids, " "); got != "m0#1 z1#2 m1#3 a1#4 z2#5" {
		t.Fatalf("runs = %s", got)
	}
}

func TestLifecycleInvalidSchedule(t *testing.T) {
	m, o := claimedRun(t)
	for _, s := range []Schedule{{Kind: 0}, {Kind: ReleaseTerminal, Status: StatusWaiting}} {
		if err := m.Commit("r1", o.Token, o.CheckpointSeq, s, at(11)); !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Commit(%+v) err = %v", s, err)
		}
	}
	if r := mustRun(t, m, "r1"); r.CheckpointSeq != 0 || !r.Claimed() {
		t.Fatalf("invalid commit changed the run: %+v", r)
	}
	if err := m.AbandonClaim("r1", o.Token, 0, at(11), at(12), 0); err != nil {
		t.Fatalf("AbandonClaim(no limit): %v", err)
	}
	if r := mustRun(t, m, "r1"); r.Poisoned || r.Abandons != 1 || !r.WakeAt.Equal(at(12)) {
		t.Fatalf("unlimited abandon = %+v", r)
	}
}

func TestModelCloneIsIndependent(t *testing.T) {
	m, _ := claimedRun(t)
	c := m.Clone()
	insert(t, c, "z", "z1", at(0))
	if _, ok := m.Run("z1"); ok {
		t.Fatal("clone shares runs")
	}
	if err := c.Cancel("r1", at(30)); err != nil {
		t.Fatal(err)
	}
	if r := mustRun(t, m, "r1"); r.Status != StatusRunning {
		t.Fatal("clone shares run rows")
	}
}

package lifecycle

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Every read and write names a scope; another scope's run reads as missing
// and nothing changes.
func TestRunStoreScopeIsolation(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	s.Insert("other", "r2")
	before := s.Row("r1")
	ctx := testkit.Context(t)

	wrong := docket.Tenant("other")
	foreign := docket.Holder{Scope: wrong, RunID: "r1", Token: lease.Holder.Token}
	decided := false
	decide := func(docket.Run) (docket.Mutation, error) {
		decided = true
		return docket.Mutation{Status: docket.StatusCancelled}, nil
	}
	ops := map[string]func(docket.Scope, docket.Holder) error{
		"FetchRun": func(sc docket.Scope, _ docket.Holder) error { _, err := s.Client.FetchRun(ctx, sc, "r1"); return err },
		"InspectRun": func(sc docket.Scope, _ docket.Holder) error {
			_, err := s.Client.InspectRun(ctx, sc, "r1")
			return err
		},
		"RefreshClaim": func(_ docket.Scope, h docket.Holder) error { _, err := s.Client.RefreshClaim(ctx, h); return err },
		"ReleaseClaim": func(_ docket.Scope, h docket.Holder) error { _, err := s.Client.ReleaseClaim(ctx, h); return err },
		"Commit": func(_ docket.Scope, h docket.Holder) error {
			_, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: h, ExpectedSeq: lease.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone)})
			return err
		},
		"AbandonClaim": func(_ docket.Scope, h docket.Holder) error {
			_, err := s.Client.AbandonClaim(ctx, docket.AbandonRequest{Holder: h, ExpectedSeq: lease.Seq})
			return err
		},
		"MutateRun": func(sc docket.Scope, _ docket.Holder) error {
			_, err := s.Client.MutateRun(ctx, sc, "r1", decide)
			return err
		},
		"Cancel": func(sc docket.Scope, _ docket.Holder) error { _, err := s.Client.Cancel(ctx, sc, "r1"); return err },
		"RetryPoisonedRun": func(sc docket.Scope, _ docket.Holder) error {
			_, err := s.Client.RetryPoisonedRun(ctx, sc, "r1")
			return err
		},
	}
	for name, op := range ops {
		testkit.ExpectErrorIs(t, name+" from another tenant", op(wrong, foreign), docket.ErrNotFound)
		tenantless := docket.Holder{Scope: docket.Tenantless, RunID: "r1", Token: lease.Holder.Token}
		testkit.ExpectErrorIs(t, name+" tenantless under required tenancy", op(docket.Tenantless, tenantless), docket.ErrTenantRequired)
		expectRowUnchanged(t, name, before, s.Row("r1"))
	}
	if decided {
		t.Fatal("a decision ran for another tenant's run")
	}

	page, err := s.Client.ListRuns(ctx, docket.ListRunsRequest{Scope: wrong})
	if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != "r2" || page.Next != nil {
		t.Fatalf("list of other: %+v, err %v", page, err)
	}
	_, err = s.Client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenantless})
	testkit.ExpectErrorIs(t, "tenantless list", err, docket.ErrTenantRequired)

	// The right scope reaches the run.
	run, err := s.Client.FetchRun(ctx, docket.Tenant("acme"), "r1")
	if err != nil || run.RunID != "r1" || run.Scope != docket.Tenant("acme") || !run.Claimed() {
		t.Fatalf("fetch in scope: %+v, err %v", run, err)
	}
}

// Under tenant mode none the tenantless owner is one ordinary scope, and a
// tenant scope does not see its runs.
func TestRunStoreTenantlessScope(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.LegacyConfig())
	ctx := testkit.Context(t)
	run, err := client.InsertRun(ctx, docket.NewRun{Scope: docket.Tenantless, GraphID: "g", GraphHash: "h", State: json.RawMessage(`[1,2]`)})
	if err != nil {
		t.Fatalf("insert tenantless: %v", err)
	}
	if _, err := uuid.Parse(run.RunID); err != nil || run.Scope != docket.Tenantless {
		t.Fatalf("want a generated UUID run id in the tenantless scope, got %+v (%v)", run, err)
	}
	if n := testkit.QueryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = ''`); n != 1 {
		t.Fatalf("tenantless unfinished count: %d", n)
	}
	if _, err := client.FetchRun(ctx, docket.Tenantless, run.RunID); err != nil {
		t.Fatalf("fetch tenantless: %v", err)
	}
	_, err = client.FetchRun(ctx, docket.Tenant("acme"), run.RunID)
	testkit.ExpectErrorIs(t, "fetch tenantless run as a tenant", err, docket.ErrNotFound)
}

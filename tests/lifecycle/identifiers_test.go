package lifecycle

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
	"github.com/jackc/pgx/v5/pgconn"
)

// oddIdentifiers are valid identifiers that would break SQL or a
// shell if anything spliced them into text: quotes, semicolons, comment and
// placeholder syntax, backslashes and non-ASCII text. All are unique.
var oddIdentifiers = []string{
	`o'brien`,
	`"; drop table docket_runs; --`,
	`Robert'); DROP TABLE docket_claim_schedule;--`,
	`back\slash\\`,
	`日本語テナント`,
	`emoji 🚀 tenant`,
	`%s %I $1 :"role"`,
	`a,b;c`,
	` leading and trailing `,
	"e\u0301 combining",
	"\u200f right-to-left mark",
	"`backtick`",
	`$$dollar$$ quoting`,
	`%_ like wildcards`,
	strings.Repeat("é", docket.MaxIdentifierBytes/2),
}

func TestOddIdentifiersRoundTripLiterally(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	ctx := testkit.Context(t)
	catalog := testkit.Catalog(t, pool)
	n := len(oddIdentifiers)
	at := func(i int) string { return oddIdentifiers[i%n] }

	runs := make([]docket.NewRun, n)
	for i := range runs {
		runs[i] = docket.NewRun{RunID: at(i), Scope: docket.Tenant(at(i + 1)), GraphID: at(i + 2), GraphHash: at(i + 3),
			State: json.RawMessage(`{"id":` + string(jsonString(t, at(i))) + `}`)}
	}
	if _, err := client.InsertRuns(ctx, runs[1:]); err != nil {
		t.Fatalf("insert runs: %v", err)
	}
	if _, err := client.InsertRun(ctx, runs[0]); err != nil {
		t.Fatalf("insert run: %v", err)
	}

	for i, want := range runs {
		got, err := client.FetchRun(ctx, want.Scope, want.RunID)
		if err != nil {
			t.Fatalf("fetch %q: %v", want.RunID, err)
		}
		tenant, _ := got.Scope.TenantID()
		if got.RunID != want.RunID || tenant != at(i+1) || got.GraphID != want.GraphID || got.GraphHash != want.GraphHash {
			t.Fatalf("fetched %q/%q/%q/%q, want %q/%q/%q/%q", got.RunID, tenant, got.GraphID, got.GraphHash,
				want.RunID, at(i+1), want.GraphID, want.GraphHash)
		}
		var raw struct{ RunID, Tenant, Graph, Hash, Scope, StateID string }
		err = pool.QueryRow(ctx, `select run_id, tenant_id, graph_id, graph_hash, scope_key, state->>'id'
			  from docket_runs where run_id = $1`, want.RunID).Scan(&raw.RunID, &raw.Tenant, &raw.Graph, &raw.Hash, &raw.Scope, &raw.StateID)
		if err != nil {
			t.Fatalf("raw row %q: %v", want.RunID, err)
		}
		if raw.RunID != want.RunID || raw.Tenant != at(i+1) || raw.Scope != at(i+1) || raw.Graph != want.GraphID ||
			raw.Hash != want.GraphHash || raw.StateID != at(i) {
			t.Fatalf("stored %+v, want the literal identifiers of run %d", raw, i)
		}
		page, err := client.ListRuns(ctx, docket.ListRunsRequest{Scope: want.Scope, GraphID: want.GraphID})
		if err != nil || len(page.Runs) != 1 || page.Runs[0].RunID != want.RunID {
			t.Fatalf("list %q: %+v, %v", at(i+1), page.Runs, err)
		}
		if _, err := client.PutClaimPolicyOverride(ctx, want.Scope, 2, docket.ClaimPolicyWriteOptions{}); err != nil {
			t.Fatalf("override %q: %v", at(i+1), err)
		}
		inspection, err := client.InspectClaimPolicy(ctx, want.Scope)
		if err != nil || inspection.Unfinished != 1 || inspection.Source != docket.CapFromOverride {
			t.Fatalf("inspect %q: %+v, %v", at(i+1), inspection, err)
		}
		r := testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "--database-url", pool.Config().ConnString(), "--", at(i+1))
		if !strings.Contains(r.Stdout, "scope: tenant:"+at(i+1)+"\n") {
			t.Fatalf("CLI inspect of %q printed:\n%s", at(i+1), r.Stdout)
		}
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_partitions where scope_key = any($1)`, oddIdentifiers); got != int64(n) {
		t.Fatalf("%d partitions carry the literal tenant ids, want %d", got, n)
	}

	res, err := client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: n, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
	if err != nil || len(res.Leases) != n {
		t.Fatalf("claim: %d leases, %v; want %d", len(res.Leases), err, n)
	}
	for _, l := range res.Leases {
		i := 0
		for i < n && at(i) != l.RunID {
			i++
		}
		tenant, _ := l.Scope.TenantID()
		if i == n || tenant != at(i+1) || l.GraphID != at(i+2) || l.GraphHash != at(i+3) {
			t.Fatalf("lease %q of %q (%q, %q) does not match a stored run", l.RunID, tenant, l.GraphID, l.GraphHash)
		}
		if _, err := client.Commit(ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq, Step: 1,
			CheckpointType: at(i + 4), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
			t.Fatalf("commit %q: %v", l.RunID, err)
		}
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'done' and latest_checkpoint_type = any($1)`, oddIdentifiers); got != int64(n) {
		t.Fatalf("%d runs done with a literal checkpoint type, want %d", got, n)
	}
	if after := testkit.Catalog(t, pool); after != catalog {
		t.Fatalf("the catalog changed:\nbefore %s\nafter  %s", catalog, after)
	}
	testkit.ExpectRingExact(t, pool)
	t.Logf("%d odd identifiers stored and returned literally by insert, fetch, list, raw SQL, override, inspect, CLI, claim and commit", n)
}

// jsonString encodes s as a JSON string.
func jsonString(t testing.TB, s string) []byte {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return b
}

// Plain SQL is held to the identifier rules the API applies: each id the
// API would refuse is refused by the named check of its column, which
// docket.RunWriteError maps to ErrInvalidArgument, and nothing is written.
func TestSQLInsertedIdentifiersAreHeldToTheRules(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimTenantFair(t, 2)
	ctx := testkit.Context(t)
	for _, c := range []struct {
		runID, tenant, check string
	}{
		{"sql-long-tenant", strings.Repeat("t", docket.MaxIdentifierBytes+1), "docket_runs_tenant_id_check"},
		{"sql-tab-tenant", "tab\there", "docket_runs_tenant_id_check"},
		{"sql-blank-tenant", "  ", "docket_runs_tenant_id_check"},
		{"sql-0\twith tab", "acme", "docket_runs_run_id_check"},
		{strings.Repeat("r", docket.MaxIdentifierBytes+1), "acme", "docket_runs_run_id_check"},
		{" ", "acme", "docket_runs_run_id_check"},
	} {
		_, err := e.Pool.Exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
			values ($1, $2, 'g', 'h1', 'running', '{}', now())`, c.runID, c.tenant)
		pgErr, ok := errors.AsType[*pgconn.PgError](err)
		if !ok || pgErr.Code != "23514" || pgErr.ConstraintName != c.check {
			t.Fatalf("insert of run %.20q for tenant %.20q: %v, want a violation of %s", c.runID, c.tenant, err, c.check)
		}
		if err := docket.RunWriteError(err); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Fatalf("RunWriteError(%s) = %v, want ErrInvalidArgument", c.check, err)
		}
	}
	if got := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs`); got != 0 {
		t.Fatalf("%d runs written", got)
	}
	testkit.ExpectRingExact(t, e.Pool)
}

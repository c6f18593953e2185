package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Run documents travel as text, so every pgx execution mode stores them,
// including the ones a transaction pooler may require.
func TestRunStateRoundTripsInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	for _, mode := range testkit.QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testkit.Context(t)
			cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
			scope := docket.Tenant("modes")
			if _, err := client.InsertRun(ctx, docket.NewRun{
				RunID: "mode-run", Scope: scope, GraphID: "g", GraphHash: "h",
				State: json.RawMessage(`{"step": "inserted", "n": 1}`),
			}); err != nil {
				t.Fatalf("insert: %v", err)
			}
			res, err := client.ClaimDue(ctx, docket.ClaimRequest{
				Now: time.Now().Add(time.Second), Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5,
			})
			if err != nil || len(res.Leases) != 1 {
				t.Fatalf("claim: %v, %d leases", err, len(res.Leases))
			}
			lease := res.Leases[0]
			if _, err := client.Commit(ctx, docket.CommitRequest{
				Holder: lease.Holder(), ExpectedSeq: lease.CheckpointSeq, Step: 1,
				State:       json.RawMessage(`{"step": "committed", "n": 2}`),
				Disposition: docket.RetainClaim(),
			}); err != nil {
				t.Fatalf("commit: %v", err)
			}
			run, err := client.FetchRun(ctx, scope, "mode-run")
			if err != nil {
				t.Fatalf("fetch: %v", err)
			}
			if got, want := string(run.State), `{"n": 2, "step": "committed"}`; got != want {
				t.Fatalf("state %s, want %s", got, want)
			}
		})
	}
}

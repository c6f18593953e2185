package admin

import (
	"net/http"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The tenant page shows the effective admission rate, where it comes from,
// the tokens left and, once they are spent, the next admission.
func TestConsoleTenantRate(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	srv := consoleServer(t, d.pool, false, nil)
	c := newConsoleClient(t, srv)
	ctx := testkit.Context(t)
	rate := func() string {
		t.Helper()
		return testkit.ConsoleFacts(t, c.get("/tenants/acme").expect(t, "acme", http.StatusOK).body, "rate")
	}
	if got := rate(); got != "none" {
		t.Fatalf("rate without one = %q, want none", got)
	}
	client := testkit.OpenClient(t, d.pool, testkit.TenantFairConfig(2))
	if _, err := client.PutClaimPolicyRate(ctx, docket.RateLimit{Limit: 50, Period: time.Second, Burst: 5}, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := rate(); got != "50/1s burst 5 (default): 6 now" {
		t.Fatalf("default rate = %q", got)
	}
	if _, err := client.PutTenantRate(ctx, docket.Tenant("acme"), docket.RateLimit{}, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := rate(); got != "none (exempt from the default)" {
		t.Fatalf("exempt rate = %q", got)
	}
	if _, err := client.PutTenantRate(ctx, docket.Tenant("acme"), docket.RateLimit{Limit: 1, Period: time.Hour}, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	next := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	testkit.ExecSQL(t, d.pool, `update docket_claim_partitions set rate_tat = $1 where scope_key = 'acme'`, next)
	if got, want := rate(), "1/1h0m0s (override): 0 now, next admission "+consoleTime(next); got != want {
		t.Fatalf("spent rate = %q, want %q", got, want)
	}
}

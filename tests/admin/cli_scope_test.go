package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// scopeSeedScopes are the scopes of the round-trip domain: the tenantless
// scope, an ordinary tenant, and tenants whose ids are the printed form of
// another scope ("tenantless") or start like one ("tenant:nested").
var scopeSeedScopes = []docket.Scope{
	docket.Tenantless, docket.Tenant("tenant-01"), docket.Tenant("tenantless"), docket.Tenant("tenant:nested"),
}

// scopeSeed gives each scope of scopeSeedScopes one running run and one
// schedule, under TenantFair at cap 4, and returns the database URL.
func scopeSeed(t *testing.T) string {
	t.Helper()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4}})
	ctx := testkit.Context(t)
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, scope := range scopeSeedScopes {
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: "run-" + string(rune('a'+i)), Scope: scope,
			GraphID: "g", GraphHash: "h1", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("insert into %s: %v", scope, err)
		}
		if _, err := client.AddSchedule(ctx, docket.NewSchedule{Scope: scope, Name: "hourly", GraphID: "g", GraphHash: "h1",
			State: json.RawMessage(`{}`), Every: time.Hour, Start: start}); err != nil {
			t.Fatalf("schedule in %s: %v", scope, err)
		}
	}
	return pool.Config().ConnString()
}

// tableRows returns the cells of a table's rows: no header, no "next:".
func tableRows(out string) [][]string {
	var rows [][]string
	for _, line := range cliLines(out)[1:] {
		if !strings.HasPrefix(line, "next: ") {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// wantPrefixLines requires out to start with the lines want.
func wantPrefixLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	if prefix := strings.Join(want, "\n") + "\n"; !strings.HasPrefix(out, prefix) {
		t.Fatalf("%s printed\n%s\nwant it to start with\n%s", what, out, prefix)
	}
}

// Every scope a list prints addresses that scope wherever a scope is read:
// list -> show -> action for runs, tenants, schedules and policy, with
// exactly the scope text of the list.
func TestCLIScopeRoundTrip(t *testing.T) {
	t.Parallel()
	url := scopeSeed(t)
	cliOK := func(args ...string) string {
		t.Helper()
		return testkit.CLIExpect(t, testkit.ExitOK, "", append(args, "--database-url", url)...).Stdout
	}

	t.Run("runs", func(t *testing.T) {
		rows := tableRows(cliOK("runs", "list"))
		if len(rows) != len(scopeSeedScopes) {
			t.Fatalf("runs list printed %d runs, want %d", len(rows), len(scopeSeedScopes))
		}
		for _, row := range rows {
			runID, scope := row[0], row[1]
			wantLines(t, "runs list --tenant "+scope, cliOK("runs", "list", "--tenant", scope), listHeaderCells, strings.Join(row, " "))
			wantPrefixLines(t, "runs show "+scope, cliOK("runs", "show", scope, runID), "scope: "+scope, "run_id: "+runID)
			wantLines(t, "runs cancel "+scope, cliOK("runs", "cancel", scope, runID),
				"scope: "+scope, "run_id: "+runID, "status: cancelled", "step: 0", "checkpoint_seq: 0")
			wantPrefixLines(t, "runs retry "+scope, cliOK("runs", "retry", scope, runID),
				"scope: "+scope, "run_id: "+runID, "status: running", "step: 0", "checkpoint_seq: 0")
		}
	})

	t.Run("tenants and policy", func(t *testing.T) {
		rows := tableRows(cliOK("tenants", "list"))
		if len(rows) != len(scopeSeedScopes) {
			t.Fatalf("tenants list printed %d scopes, want %d", len(rows), len(scopeSeedScopes))
		}
		for i, row := range rows {
			scope := row[0]
			show := cliOK("tenants", "show", scope)
			wantPrefixLines(t, "tenants show "+scope, show, "scope: "+scope, "admission_mode: tenant_fair", "effective_max_active_runs: 4", "source: default")
			if inspect := cliOK("policy", "inspect", scope); inspect != show {
				t.Fatalf("policy inspect %s printed\n%s\ntenants show printed\n%s", scope, inspect, show)
			}
			next := []string{tenantsHeaderCells}
			if i+1 < len(rows) {
				next = append(next, strings.Join(rows[i+1], " "))
			}
			if i+2 < len(rows) {
				next = append(next, "next: "+rows[i+1][0])
			}
			wantLines(t, "tenants list --after "+scope, cliOK("tenants", "list", "--after", scope, "--limit", "1"), next...)

			wantPrefixLines(t, "policy set-override "+scope, cliOK("policy", "set-override", scope, "3"),
				"scope: "+scope, "override_max_active_runs: 3")
			wantPrefixLines(t, "policy inspect "+scope, cliOK("policy", "inspect", scope),
				"scope: "+scope, "admission_mode: tenant_fair", "effective_max_active_runs: 3", "source: override")
			wantPrefixLines(t, "policy reset-override "+scope, cliOK("policy", "reset-override", scope),
				"scope: "+scope, "override_max_active_runs: none")
		}
	})

	t.Run("schedules", func(t *testing.T) {
		rows := tableRows(cliOK("schedules", "list"))
		if len(rows) != len(scopeSeedScopes) {
			t.Fatalf("schedules list printed %d schedules, want %d", len(rows), len(scopeSeedScopes))
		}
		for i, row := range rows {
			scope, name := row[0], row[1]
			wantLines(t, "schedules list --tenant "+scope, cliOK("schedules", "list", "--tenant", scope), schedulesHeaderCells, strings.Join(row, " "))
			next := []string{schedulesHeaderCells}
			if i+1 < len(rows) {
				next = append(next, strings.Join(rows[i+1], " "))
			}
			if i+2 < len(rows) {
				next = append(next, "next: "+rows[i+1][0]+"/"+rows[i+1][1])
			}
			wantLines(t, "schedules list --after "+scope+"/"+name, cliOK("schedules", "list", "--after", scope+"/"+name, "--limit", "1"), next...)
			wantPrefixLines(t, "schedules pause "+scope, cliOK("schedules", "pause", scope, name), "scope: "+scope, "name: "+name)
			wantPrefixLines(t, "schedules resume "+scope, cliOK("schedules", "resume", scope, name), "scope: "+scope, "name: "+name)
			wantLines(t, "schedules remove "+scope, cliOK("schedules", "remove", scope, name), "scope: "+scope, "name: "+name, "removed: yes")
		}
	})
}

// The table headers as cells.
const (
	listHeaderCells      = "RUN_ID SCOPE GRAPH STATUS PHASE ATTEMPT STEP SEQ CLAIMED WAKE_AT UPDATED_AT LAST_ERROR"
	tenantsHeaderCells   = "SCOPE CAP SOURCE ADMITTED CLAIMED READY QUEUED DEBT UNFINISHED EPOCH PARKED PAUSED"
	schedulesHeaderCells = "SCOPE NAME CADENCE ZONE MISSED PAUSED NEXT_TICK LAST_TICK VERSION"
)

// A scope operand is read as the lists print it (tenant:ID, tenantless) or
// as a bare tenant id; the empty tenant id is refused before connecting.
func TestCLIScopeOperandForms(t *testing.T) {
	t.Parallel()
	url := scopeSeed(t)
	for _, tc := range []struct {
		operand, scope string
	}{
		{"tenant-01", "tenant:tenant-01"},
		{"tenant:tenant-01", "tenant:tenant-01"},
		{"tenantless", "tenantless"},
		{"tenant:tenantless", "tenant:tenantless"},
		{"tenant:tenant:nested", "tenant:tenant:nested"},
	} {
		r := testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "show", tc.operand, "--database-url", url)
		wantPrefixLines(t, "tenants show "+tc.operand, r.Stdout, "scope: "+tc.scope)
	}
	unreachable := "postgres://docket@127.0.0.1:1/none?connect_timeout=5"
	for _, args := range [][]string{
		{"runs", "show", "tenant:", "run-a"},
		{"tenants", "show", "tenant:"},
		{"policy", "inspect", "tenant:"},
		{"schedules", "pause", "tenant:", "hourly"},
		{"runs", "list", "--tenant", "tenant:"},
	} {
		r := testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", unreachable)...)
		if want := `tenant:": want tenant:ID, tenantless or a tenant id`; !strings.Contains(r.Stderr, want) {
			t.Errorf("docket %s: stderr %q lacks %q", strings.Join(args, " "), r.Stderr, want)
		}
	}
}

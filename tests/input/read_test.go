package input

import (
	"context"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// badAddress is a run address (scope and run id) that names no run the
// caller may see.
type badAddress struct {
	name  string
	scope docket.Scope
	runID string
	want  error
	local bool
}

var badAddresses = []badAddress{
	{"unknown run", acme, unknownRun, docket.ErrNotFound, false},
	{"another tenant's run", acme, runOther, docket.ErrNotFound, false},
	{"own run under another tenant", docket.Tenant("globex"), runHeld, docket.ErrNotFound, false},
	// Reads accept exactly what the database lets any writer store, so an
	// id no run can have is refused before any statement.
	{"oversized run id", acme, longID, docket.ErrInvalidArgument, true},
	{"blank run id", acme, "  ", docket.ErrInvalidArgument, true},
	{"run id with a control character", acme, "held\n", docket.ErrInvalidArgument, true},
	{"empty run id", acme, "", docket.ErrInvalidArgument, true},
	{"run id with NUL", acme, "held\x00", docket.ErrInvalidArgument, true},
	{"run id not UTF-8", acme, badUTF8, docket.ErrInvalidArgument, true},
	{"tenantless scope", docket.Tenantless, runHeld, docket.ErrTenantRequired, true},
	{"empty tenant", docket.Tenant(""), runHeld, docket.ErrInvalidArgument, true},
	{"oversized tenant", docket.Tenant(longID), runHeld, docket.ErrInvalidArgument, true},
	{"blank tenant", docket.Tenant(" "), runHeld, docket.ErrInvalidArgument, true},
	{"tenant with a control character", docket.Tenant("acme\n"), runHeld, docket.ErrInvalidArgument, true},
	{"tenant with NUL", docket.Tenant("acme\x00"), runHeld, docket.ErrInvalidArgument, true},
	{"tenant not UTF-8", docket.Tenant(badUTF8), runHeld, docket.ErrInvalidArgument, true},
}

func readCases() []inputCase {
	var cases []inputCase
	for _, a := range badAddresses {
		cases = append(cases,
			inputCase{name: "FetchRun " + a.name, want: []error{a.want}, local: a.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.FetchRun(ctx, a.scope, a.runID)
					return err
				}},
			inputCase{name: "InspectRun " + a.name, want: []error{a.want}, local: a.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.InspectRun(ctx, a.scope, a.runID)
					return err
				}},
		)
	}
	badLists := []struct {
		name  string
		req   docket.ListRunsRequest
		want  error
		local bool
	}{
		{"Limit -1", docket.ListRunsRequest{Scope: acme, Limit: -1}, docket.ErrInvalidArgument, true},
		{"Limit above MaxListLimit", docket.ListRunsRequest{Scope: acme, Limit: docket.MaxListLimit + 1}, docket.ErrInvalidArgument, true},
		{"Limit MinInt", docket.ListRunsRequest{Scope: acme, Limit: minInt}, docket.ErrInvalidArgument, true},
		{"unknown status", docket.ListRunsRequest{Scope: acme, Status: "bogus"}, docket.ErrInvalidArgument, true},
		{"upper-case status", docket.ListRunsRequest{Scope: acme, Status: "RUNNING"}, docket.ErrInvalidArgument, true},
		{"tenantless scope", docket.ListRunsRequest{Scope: docket.Tenantless}, docket.ErrTenantRequired, true},
		{"empty tenant", docket.ListRunsRequest{Scope: docket.Tenant("")}, docket.ErrInvalidArgument, true},
		{"graph id with NUL", docket.ListRunsRequest{Scope: acme, GraphID: "g\x00"}, docket.ErrInvalidArgument, true},
		{"graph id not UTF-8", docket.ListRunsRequest{Scope: acme, GraphID: badUTF8}, docket.ErrInvalidArgument, true},
		{"cursor run id with NUL", docket.ListRunsRequest{Scope: acme, After: &docket.RunCursor{StartedAt: time.Now(), RunID: "a\x00"}}, docket.ErrInvalidArgument, true},
	}
	for _, b := range badLists {
		cases = append(cases, inputCase{name: "ListRuns " + b.name, want: []error{b.want}, local: b.local,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ListRuns(ctx, b.req)
				return err
			}})
	}
	return append(cases,
		inputCase{name: "FetchRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.FetchRun(ctx, acme, runHeld)
				return err
			}},
		inputCase{name: "InspectRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.InspectRun(ctx, acme, runHeld)
				return err
			}},
		inputCase{name: "ListRuns cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ListRuns(ctx, docket.ListRunsRequest{Scope: acme})
				return err
			}},
	)
}

package tests

import (
	"context"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// hardBadAddress is a run address (scope and run id) that names no run the
// caller may see.
type hardBadAddress struct {
	name  string
	scope docket.Scope
	runID string
	want  error
	local bool
}

var hardBadAddresses = []hardBadAddress{
	{"unknown run", hardAcme, hardUnknownRun, docket.ErrNotFound, false},
	{"another tenant's run", hardAcme, hardRunOther, docket.ErrNotFound, false},
	{"own run under another tenant", docket.Tenant("globex"), hardRunHeld, docket.ErrNotFound, false},
	{"oversized unknown run id", hardAcme, hardLongID, docket.ErrNotFound, false},
	{"empty run id", hardAcme, "", docket.ErrInvalidArgument, true},
	{"run id with NUL", hardAcme, "held\x00", docket.ErrInvalidArgument, true},
	{"run id not UTF-8", hardAcme, hardBadUTF8, docket.ErrInvalidArgument, true},
	{"tenantless scope", docket.Tenantless, hardRunHeld, docket.ErrTenantRequired, true},
	{"empty tenant", docket.Tenant(""), hardRunHeld, docket.ErrInvalidArgument, true},
	// Reads apply only what PostgreSQL needs, so runs inserted with plain
	// SQL stay addressable: a longer tenant id simply names no run.
	{"oversized tenant", docket.Tenant(hardLongID), hardRunHeld, docket.ErrNotFound, false},
	{"tenant with a control character", docket.Tenant("acme\n"), hardRunHeld, docket.ErrNotFound, false},
	{"tenant with NUL", docket.Tenant("acme\x00"), hardRunHeld, docket.ErrInvalidArgument, true},
	{"tenant not UTF-8", docket.Tenant(hardBadUTF8), hardRunHeld, docket.ErrInvalidArgument, true},
}

func hardReadCases() []hardInputCase {
	var cases []hardInputCase
	for _, a := range hardBadAddresses {
		cases = append(cases,
			hardInputCase{name: "FetchRun " + a.name, want: []error{a.want}, local: a.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					_, err := env.client.FetchRun(ctx, a.scope, a.runID)
					return err
				}},
			hardInputCase{name: "InspectRun " + a.name, want: []error{a.want}, local: a.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
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
		{"Limit -1", docket.ListRunsRequest{Scope: hardAcme, Limit: -1}, docket.ErrInvalidArgument, true},
		{"Limit above MaxListLimit", docket.ListRunsRequest{Scope: hardAcme, Limit: docket.MaxListLimit + 1}, docket.ErrInvalidArgument, true},
		{"Limit MinInt", docket.ListRunsRequest{Scope: hardAcme, Limit: hardMinInt}, docket.ErrInvalidArgument, true},
		{"unknown status", docket.ListRunsRequest{Scope: hardAcme, Status: "bogus"}, docket.ErrInvalidArgument, true},
		{"upper-case status", docket.ListRunsRequest{Scope: hardAcme, Status: "RUNNING"}, docket.ErrInvalidArgument, true},
		{"tenantless scope", docket.ListRunsRequest{Scope: docket.Tenantless}, docket.ErrTenantRequired, true},
		{"empty tenant", docket.ListRunsRequest{Scope: docket.Tenant("")}, docket.ErrInvalidArgument, true},
		{"graph id with NUL", docket.ListRunsRequest{Scope: hardAcme, GraphID: "g\x00"}, docket.ErrInvalidArgument, true},
		{"graph id not UTF-8", docket.ListRunsRequest{Scope: hardAcme, GraphID: hardBadUTF8}, docket.ErrInvalidArgument, true},
		{"cursor run id with NUL", docket.ListRunsRequest{Scope: hardAcme, After: &docket.RunCursor{StartedAt: time.Now(), RunID: "a\x00"}}, docket.ErrInvalidArgument, true},
	}
	for _, b := range badLists {
		cases = append(cases, hardInputCase{name: "ListRuns " + b.name, want: []error{b.want}, local: b.local,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.ListRuns(ctx, b.req)
				return err
			}})
	}
	return append(cases,
		hardInputCase{name: "FetchRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.FetchRun(ctx, hardAcme, hardRunHeld)
				return err
			}},
		hardInputCase{name: "InspectRun cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.InspectRun(ctx, hardAcme, hardRunHeld)
				return err
			}},
		hardInputCase{name: "ListRuns cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.ListRuns(ctx, docket.ListRunsRequest{Scope: hardAcme})
				return err
			}},
	)
}

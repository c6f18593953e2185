package tests

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/docket"
)

// hardBadHolder is a holder that does not hold the fixture's claim, and the
// sentinel a holder write must produce for it (nil: the documented stale
// outcome without an error).
type hardBadHolder struct {
	name    string
	holder  func(env *hardInputEnv) docket.Holder
	want    error
	refresh error // RefreshClaim's sentinel when it differs from want
	local   bool
}

// hardHolderOf returns the fixture lease's holder changed by mutate.
func hardHolderOf(mutate func(*docket.Holder)) func(env *hardInputEnv) docket.Holder {
	return func(env *hardInputEnv) docket.Holder {
		h := env.lease.Holder()
		mutate(&h)
		return h
	}
}

var hardBadHolders = []hardBadHolder{
	{name: "nil token", holder: hardHolderOf(func(h *docket.Holder) { h.Token = uuid.Nil }), want: docket.ErrInvalidArgument, local: true},
	{name: "empty run id", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = "" }), want: docket.ErrInvalidArgument, local: true},
	{name: "run id with NUL", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = "held\x00" }), want: docket.ErrInvalidArgument, local: true},
	{name: "tenantless scope", holder: hardHolderOf(func(h *docket.Holder) { h.Scope = docket.Tenantless }), want: docket.ErrTenantRequired, local: true},
	{name: "empty tenant", holder: hardHolderOf(func(h *docket.Holder) { h.Scope = docket.Tenant("") }), want: docket.ErrInvalidArgument, local: true},
	{name: "unknown run", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = hardUnknownRun }), want: docket.ErrNotFound},
	{name: "another tenant's scope", holder: hardHolderOf(func(h *docket.Holder) { h.Scope = docket.Tenant("globex") }), want: docket.ErrNotFound},
	{name: "another tenant's run", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = hardRunOther }), want: docket.ErrNotFound},
	{name: "wrong token", holder: hardHolderOf(func(h *docket.Holder) { h.Token = uuid.New() }), refresh: docket.ErrClaimLost},
	{name: "token on a finished run", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = hardRunFinished }), refresh: docket.ErrClaimLost},
	{name: "token on a queued run", holder: hardHolderOf(func(h *docket.Holder) { h.RunID = hardRunQueued }), refresh: docket.ErrClaimLost},
}

// errReleasedByStranger reports a ReleaseClaim that released a claim it did
// not hold.
var errReleasedByStranger = errors.New("a stranger's ReleaseClaim released the claim")

func hardHolderCases() []hardInputCase {
	var cases []hardInputCase
	for _, b := range hardBadHolders {
		refreshWant := b.want
		if b.refresh != nil {
			refreshWant = b.refresh
		}
		cases = append(cases,
			hardInputCase{name: "RefreshClaim " + b.name, want: hardWants(refreshWant), local: b.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					_, err := env.client.RefreshClaim(ctx, b.holder(env))
					return err
				}},
			hardInputCase{name: "ReleaseClaim " + b.name, want: hardWants(b.want), local: b.local,
				call: func(ctx context.Context, env *hardInputEnv) error {
					released, err := env.client.ReleaseClaim(ctx, b.holder(env))
					if released {
						return errReleasedByStranger
					}
					return err
				}},
		)
	}
	return append(cases,
		hardInputCase{name: "RefreshClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.RefreshClaim(ctx, env.lease.Holder())
				return err
			}},
		hardInputCase{name: "ReleaseClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := env.client.ReleaseClaim(ctx, env.lease.Holder())
				return err
			}},
	)
}

// hardWants is the want list of one sentinel, or none for nil.
func hardWants(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}

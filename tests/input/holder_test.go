package input

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/docket"
)

// badHolder is a holder that does not hold the fixture's claim, and the
// sentinel a holder write must produce for it (nil: the documented stale
// outcome without an error).
type badHolder struct {
	name    string
	holder  func(env *inputEnv) docket.Holder
	want    error
	refresh error // RefreshClaim's sentinel when it differs from want
	local   bool
}

// holderOf returns the fixture lease's holder changed by mutate.
func holderOf(mutate func(*docket.Holder)) func(env *inputEnv) docket.Holder {
	return func(env *inputEnv) docket.Holder {
		h := env.lease.Holder()
		mutate(&h)
		return h
	}
}

var badHolders = []badHolder{
	{name: "nil token", holder: holderOf(func(h *docket.Holder) { h.Token = uuid.Nil }), want: docket.ErrInvalidArgument, local: true},
	{name: "empty run id", holder: holderOf(func(h *docket.Holder) { h.RunID = "" }), want: docket.ErrInvalidArgument, local: true},
	{name: "run id with NUL", holder: holderOf(func(h *docket.Holder) { h.RunID = "held\x00" }), want: docket.ErrInvalidArgument, local: true},
	{name: "tenantless scope", holder: holderOf(func(h *docket.Holder) { h.Scope = docket.Tenantless }), want: docket.ErrTenantRequired, local: true},
	{name: "empty tenant", holder: holderOf(func(h *docket.Holder) { h.Scope = docket.Tenant("") }), want: docket.ErrInvalidArgument, local: true},
	{name: "unknown run", holder: holderOf(func(h *docket.Holder) { h.RunID = unknownRun }), want: docket.ErrNotFound},
	{name: "another tenant's scope", holder: holderOf(func(h *docket.Holder) { h.Scope = docket.Tenant("globex") }), want: docket.ErrNotFound},
	{name: "another tenant's run", holder: holderOf(func(h *docket.Holder) { h.RunID = runOther }), want: docket.ErrNotFound},
	{name: "wrong token", holder: holderOf(func(h *docket.Holder) { h.Token = uuid.New() }), refresh: docket.ErrClaimLost},
	{name: "token on a finished run", holder: holderOf(func(h *docket.Holder) { h.RunID = runFinished }), refresh: docket.ErrClaimLost},
	{name: "token on a queued run", holder: holderOf(func(h *docket.Holder) { h.RunID = runQueued }), refresh: docket.ErrClaimLost},
}

// errReleasedByStranger reports a ReleaseClaim that released a claim it did
// not hold.
var errReleasedByStranger = errors.New("a stranger's ReleaseClaim released the claim")

func holderCases() []inputCase {
	var cases []inputCase
	for _, b := range badHolders {
		refreshWant := b.want
		if b.refresh != nil {
			refreshWant = b.refresh
		}
		cases = append(cases,
			inputCase{name: "RefreshClaim " + b.name, want: wants(refreshWant), local: b.local,
				call: func(ctx context.Context, env *inputEnv) error {
					_, err := env.client.RefreshClaim(ctx, b.holder(env))
					return err
				}},
			inputCase{name: "ReleaseClaim " + b.name, want: wants(b.want), local: b.local,
				call: func(ctx context.Context, env *inputEnv) error {
					released, err := env.client.ReleaseClaim(ctx, b.holder(env))
					if released {
						return errReleasedByStranger
					}
					return err
				}},
		)
	}
	return append(cases,
		inputCase{name: "RefreshClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.RefreshClaim(ctx, env.lease.Holder())
				return err
			}},
		inputCase{name: "ReleaseClaim cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ReleaseClaim(ctx, env.lease.Holder())
				return err
			}},
	)
}

// wants is the want list of one sentinel, or none for nil.
func wants(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}

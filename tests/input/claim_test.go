package input

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// claimEntry is one of the four claim entrypoints.
type claimEntry struct {
	name string
	call func(ctx context.Context, env *inputEnv, req docket.ClaimRequest) error
}

var claimEntries = []claimEntry{
	{"ClaimDue", func(ctx context.Context, env *inputEnv, req docket.ClaimRequest) error {
		_, err := env.client.ClaimDue(ctx, req)
		return err
	}},
	{"ClaimDueTx", func(ctx context.Context, env *inputEnv, req docket.ClaimRequest) error {
		_, err := env.client.ClaimDueTx(ctx, env.begin(ctx, pgx.TxOptions{}), req)
		return err
	}},
	{"TraceClaimDue", func(ctx context.Context, env *inputEnv, req docket.ClaimRequest) error {
		_, err := env.client.TraceClaimDue(ctx, req)
		return err
	}},
	{"TraceClaimDueTx", func(ctx context.Context, env *inputEnv, req docket.ClaimRequest) error {
		_, err := env.client.TraceClaimDueTx(ctx, env.begin(ctx, pgx.TxOptions{}), req)
		return err
	}},
}

// goodClaim is a valid claim request that would lease the fixture's
// queued run if it ran.
func goodClaim() docket.ClaimRequest {
	return docket.ClaimRequest{Now: time.Now().Add(48 * time.Hour), Limit: 4, ClaimTTL: 100 * time.Hour, MaxClaimAttempts: 10}
}

func claimCases() []inputCase {
	bad := []struct {
		name   string
		mutate func(*docket.ClaimRequest)
	}{
		{"zero Now", func(r *docket.ClaimRequest) { r.Now = time.Time{} }},
		{"Limit 0", func(r *docket.ClaimRequest) { r.Limit = 0 }},
		{"Limit -1", func(r *docket.ClaimRequest) { r.Limit = -1 }},
		{"Limit 2147483648", func(r *docket.ClaimRequest) { r.Limit = overflow }},
		{"Limit MinInt", func(r *docket.ClaimRequest) { r.Limit = minInt }},
		{"negative ClaimTTL (cutoff after now)", func(r *docket.ClaimRequest) { r.ClaimTTL = -time.Nanosecond }},
		{"ClaimTTL MinInt64", func(r *docket.ClaimRequest) { r.ClaimTTL = math.MinInt64 }},
		{"MaxClaimAttempts 0", func(r *docket.ClaimRequest) { r.MaxClaimAttempts = 0 }},
		{"MaxClaimAttempts -3", func(r *docket.ClaimRequest) { r.MaxClaimAttempts = -3 }},
		{"MaxClaimAttempts 2147483648", func(r *docket.ClaimRequest) { r.MaxClaimAttempts = overflow }},
		{"Preference READY", func(r *docket.ClaimRequest) { r.Preference = "READY" }},
		{"Preference with a trailing space", func(r *docket.ClaimRequest) { r.Preference = "ready " }},
		{"Preference bogus", func(r *docket.ClaimRequest) { r.Preference = "bogus" }},
	}
	var cases []inputCase
	for _, entry := range claimEntries {
		for _, b := range bad {
			req := goodClaim()
			b.mutate(&req)
			cases = append(cases, inputCase{
				name: entry.name + " " + b.name, want: []error{docket.ErrInvalidArgument}, local: true,
				call: func(ctx context.Context, env *inputEnv) error { return entry.call(ctx, env, req) },
			})
		}
		if entry.name == "ClaimDue" || entry.name == "TraceClaimDue" {
			cases = append(cases, inputCase{
				name: entry.name + " cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
				call: func(ctx context.Context, env *inputEnv) error { return entry.call(ctx, env, goodClaim()) },
			})
		}
	}
	return append(cases,
		inputCase{name: "ClaimDueTx read-only transaction", reason: "read_only_transaction",
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ClaimDueTx(ctx, env.begin(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly}), goodClaim())
				return err
			}},
		inputCase{name: "ClaimDueTx repeatable read", reason: "unsupported_isolation",
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ClaimDueTx(ctx, env.begin(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}), goodClaim())
				return err
			}},
		inputCase{name: "ClaimDueTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.ClaimDueTx(ctx, nil, goodClaim())
				return err
			}},
		inputCase{name: "TraceClaimDueTx nil transaction", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.TraceClaimDueTx(ctx, nil, goodClaim())
				return err
			}},
		inputCase{name: "TraceClaimDueTx serializable", reason: "unsupported_isolation",
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.client.TraceClaimDueTx(ctx, env.begin(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable}), goodClaim())
				return err
			}},
	)
}

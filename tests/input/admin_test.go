package input

import (
	"context"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// version is an ExpectedVersion option.
func version(v int64) docket.ClaimPolicyWriteOptions {
	return docket.ClaimPolicyWriteOptions{ExpectedVersion: &v}
}

// adminOps are the claim-policy writes and reads of one facade: the
// Admin from NewAdmin or the started Client.
type adminOps struct {
	name      string
	putDef    func(ctx context.Context, env *inputEnv, capValue int, o docket.ClaimPolicyWriteOptions) error
	putOver   func(ctx context.Context, env *inputEnv, s docket.Scope, capValue int, o docket.ClaimPolicyWriteOptions) error
	resetOver func(ctx context.Context, env *inputEnv, s docket.Scope, o docket.ClaimPolicyWriteOptions) error
	inspect   func(ctx context.Context, env *inputEnv, s docket.Scope) error
}

var adminFacades = []adminOps{
	{
		name: "Admin",
		putDef: func(ctx context.Context, env *inputEnv, v int, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.admin.PutClaimPolicyDefault(ctx, v, o)
			return err
		},
		putOver: func(ctx context.Context, env *inputEnv, s docket.Scope, v int, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.admin.PutClaimPolicyOverride(ctx, s, v, o)
			return err
		},
		resetOver: func(ctx context.Context, env *inputEnv, s docket.Scope, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.admin.ResetClaimPolicyOverride(ctx, s, o)
			return err
		},
		inspect: func(ctx context.Context, env *inputEnv, s docket.Scope) error {
			_, err := env.admin.InspectClaimPolicy(ctx, s)
			return err
		},
	},
	{
		name: "Client",
		putDef: func(ctx context.Context, env *inputEnv, v int, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.client.PutClaimPolicyDefault(ctx, v, o)
			return err
		},
		putOver: func(ctx context.Context, env *inputEnv, s docket.Scope, v int, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.client.PutClaimPolicyOverride(ctx, s, v, o)
			return err
		},
		resetOver: func(ctx context.Context, env *inputEnv, s docket.Scope, o docket.ClaimPolicyWriteOptions) error {
			_, err := env.client.ResetClaimPolicyOverride(ctx, s, o)
			return err
		},
		inspect: func(ctx context.Context, env *inputEnv, s docket.Scope) error {
			_, err := env.client.InspectClaimPolicy(ctx, s)
			return err
		},
	},
}

func adminCases() []inputCase {
	var cases []inputCase
	newScope := docket.Tenant("brand-new")
	for _, f := range adminFacades {
		add := func(name string, want error, local bool, call func(ctx context.Context, env *inputEnv) error) {
			cases = append(cases, inputCase{name: f.name + " " + name, want: wants(want), local: local, call: call})
		}
		for _, capValue := range []int{0, -1, overflow, minInt} {
			add("PutClaimPolicyDefault cap "+strconv.Itoa(capValue), docket.ErrInvalidCap, true, func(ctx context.Context, env *inputEnv) error {
				return f.putDef(ctx, env, capValue, docket.ClaimPolicyWriteOptions{})
			})
			add("PutClaimPolicyOverride cap "+strconv.Itoa(capValue), docket.ErrInvalidCap, true, func(ctx context.Context, env *inputEnv) error {
				return f.putOver(ctx, env, acme, capValue, docket.ClaimPolicyWriteOptions{})
			})
		}
		add("PutClaimPolicyDefault negative expected version", docket.ErrInvalidArgument, true, func(ctx context.Context, env *inputEnv) error {
			return f.putDef(ctx, env, 3, version(-1))
		})
		add("PutClaimPolicyDefault stale version", docket.ErrStale, false, func(ctx context.Context, env *inputEnv) error {
			return f.putDef(ctx, env, 3, version(99))
		})
		add("PutClaimPolicyOverride stale version of a new scope", docket.ErrStale, false, func(ctx context.Context, env *inputEnv) error {
			return f.putOver(ctx, env, newScope, 3, version(1))
		})
		add("PutClaimPolicyOverride negative expected version", docket.ErrInvalidArgument, true, func(ctx context.Context, env *inputEnv) error {
			return f.putOver(ctx, env, newScope, 3, version(-5))
		})
		add("ResetClaimPolicyOverride stale version", docket.ErrStale, false, func(ctx context.Context, env *inputEnv) error {
			return f.resetOver(ctx, env, acme, version(99))
		})
		add("ResetClaimPolicyOverride stale version of a new scope", docket.ErrStale, false, func(ctx context.Context, env *inputEnv) error {
			return f.resetOver(ctx, env, newScope, version(7))
		})
		for _, s := range []struct {
			name  string
			scope docket.Scope
			want  error
		}{
			{"tenantless scope", docket.Tenantless, docket.ErrTenantRequired},
			{"empty tenant", docket.Tenant(""), docket.ErrInvalidArgument},
			{"oversized tenant", docket.Tenant(longID), docket.ErrInvalidArgument},
			{"tenant with NUL", docket.Tenant("a\x00"), docket.ErrInvalidArgument},
			{"tenant with carriage return", docket.Tenant("a\rb"), docket.ErrInvalidArgument},
		} {
			add("PutClaimPolicyOverride "+s.name, s.want, true, func(ctx context.Context, env *inputEnv) error {
				return f.putOver(ctx, env, s.scope, 3, docket.ClaimPolicyWriteOptions{})
			})
			add("ResetClaimPolicyOverride "+s.name, s.want, true, func(ctx context.Context, env *inputEnv) error {
				return f.resetOver(ctx, env, s.scope, docket.ClaimPolicyWriteOptions{})
			})
			add("InspectClaimPolicy "+s.name, s.want, true, func(ctx context.Context, env *inputEnv) error {
				return f.inspect(ctx, env, s.scope)
			})
		}
		cancelled := func(name string, call func(ctx context.Context, env *inputEnv) error) {
			cases = append(cases, inputCase{name: f.name + " " + name + " cancelled context",
				want: []error{context.Canceled}, local: true, cancelled: true, call: call})
		}
		cancelled("PutClaimPolicyDefault", func(ctx context.Context, env *inputEnv) error {
			return f.putDef(ctx, env, 3, docket.ClaimPolicyWriteOptions{})
		})
		cancelled("PutClaimPolicyOverride", func(ctx context.Context, env *inputEnv) error {
			return f.putOver(ctx, env, newScope, 3, docket.ClaimPolicyWriteOptions{})
		})
		cancelled("InspectClaimPolicy", func(ctx context.Context, env *inputEnv) error {
			return f.inspect(ctx, env, acme)
		})
	}
	return append(cases, inputCase{name: "FetchClaimPolicyDefault cancelled context",
		want: []error{context.Canceled}, local: true, cancelled: true,
		call: func(ctx context.Context, env *inputEnv) error {
			_, err := env.admin.FetchClaimPolicyDefault(ctx)
			return err
		}})
}

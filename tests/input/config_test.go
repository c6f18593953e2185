package input

import (
	"context"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// roguePolicy is a ClaimPolicy that is neither engine.
type roguePolicy struct{ policy.TenantFair }

// open is a bad-input case that calls Open with cfg on the counting pool.
func open(name string, cfg docket.Config) inputCase {
	return inputCase{name: name, want: []error{docket.ErrInvalidConfig}, local: true,
		call: func(ctx context.Context, env *inputEnv) error {
			_, err := docket.Open(ctx, env.pool, cfg)
			return err
		}}
}

// openCap is open with a TenantFair default cap out of range.
func openCap(name string, capValue int) inputCase {
	c := open(name, docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: capValue}})
	c.want = append(c.want, docket.ErrInvalidCap)
	return c
}

func configCases() []inputCase {
	required := docket.TenantRequired
	return []inputCase{
		open("Open required tenancy without policy", docket.Config{TenantMode: required}),
		open("Open required tenancy with Legacy", docket.Config{TenantMode: required, ClaimPolicy: policy.Legacy{}}),
		open("Open required tenancy with *Legacy", docket.Config{TenantMode: required, ClaimPolicy: &policy.Legacy{}}),
		open("Open nil *TenantFair", docket.Config{TenantMode: required, ClaimPolicy: (*policy.TenantFair)(nil)}),
		open("Open unsupported policy type", docket.Config{TenantMode: required, ClaimPolicy: roguePolicy{policy.TenantFair{DefaultMaxActiveRuns: 2}}}),
		open("Open tenant mode 2", docket.Config{TenantMode: docket.TenantMode(2), ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}}),
		open("Open tenant mode -1", docket.Config{TenantMode: docket.TenantMode(-1)}),
		openCap("Open cap 0 (omitted)", 0),
		openCap("Open cap -1", -1),
		openCap("Open cap 2147483648", overflow),
		openCap("Open cap MinInt", minInt),
		func() inputCase {
			c := open("Open TenantNone with cap 0", docket.Config{ClaimPolicy: policy.TenantFair{}})
			c.want = append(c.want, docket.ErrInvalidCap)
			return c
		}(),
		{name: "Open nil pool", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := docket.Open(ctx, nil, testkit.TenantFairConfig(2))
				return err
			}},
		{name: "Open cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := docket.Open(ctx, env.pool, testkit.TenantFairConfig(3))
				return err
			}},
		{name: "NewAdmin tenant mode 5", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := docket.NewAdmin(ctx, env.pool, docket.AdminConfig{TenantMode: 5})
				return err
			}},
		{name: "NewAdmin nil pool", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := docket.NewAdmin(ctx, nil, docket.AdminConfig{})
				return err
			}},
		{name: "NewAdmin cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := docket.NewAdmin(ctx, env.pool, docket.AdminConfig{})
				return err
			}},
	}
}

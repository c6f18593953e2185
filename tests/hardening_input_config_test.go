package tests

import (
	"context"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/testkit"
	"github.com/docketrun/docket-go/policy"
)

// hardRoguePolicy is a ClaimPolicy that is neither engine.
type hardRoguePolicy struct{ policy.TenantFair }

// hardOpen is a bad-input case that calls Open with cfg on the counting pool.
func hardOpen(name string, cfg docket.Config) hardInputCase {
	return hardInputCase{name: name, want: []error{docket.ErrInvalidConfig}, local: true,
		call: func(ctx context.Context, env *hardInputEnv) error {
			_, err := docket.Open(ctx, env.pool, cfg)
			return err
		}}
}

// hardOpenCap is hardOpen with a TenantFair default cap out of range.
func hardOpenCap(name string, capValue int) hardInputCase {
	c := hardOpen(name, docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: capValue}})
	c.want = append(c.want, docket.ErrInvalidCap)
	return c
}

func hardConfigCases() []hardInputCase {
	required := docket.TenantRequired
	return []hardInputCase{
		hardOpen("Open required tenancy without policy", docket.Config{TenantMode: required}),
		hardOpen("Open required tenancy with Legacy", docket.Config{TenantMode: required, ClaimPolicy: policy.Legacy{}}),
		hardOpen("Open required tenancy with *Legacy", docket.Config{TenantMode: required, ClaimPolicy: &policy.Legacy{}}),
		hardOpen("Open nil *TenantFair", docket.Config{TenantMode: required, ClaimPolicy: (*policy.TenantFair)(nil)}),
		hardOpen("Open unsupported policy type", docket.Config{TenantMode: required, ClaimPolicy: hardRoguePolicy{policy.TenantFair{DefaultMaxActiveRuns: 2}}}),
		hardOpen("Open tenant mode 2", docket.Config{TenantMode: docket.TenantMode(2), ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}}),
		hardOpen("Open tenant mode -1", docket.Config{TenantMode: docket.TenantMode(-1)}),
		hardOpenCap("Open cap 0 (omitted)", 0),
		hardOpenCap("Open cap -1", -1),
		hardOpenCap("Open cap 2147483648", hardOverflow),
		hardOpenCap("Open cap MinInt", hardMinInt),
		func() hardInputCase {
			c := hardOpen("Open TenantNone with cap 0", docket.Config{ClaimPolicy: policy.TenantFair{}})
			c.want = append(c.want, docket.ErrInvalidCap)
			return c
		}(),
		{name: "Open nil pool", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := docket.Open(ctx, nil, testkit.TenantFairConfig(2))
				return err
			}},
		{name: "Open cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := docket.Open(ctx, env.pool, testkit.TenantFairConfig(3))
				return err
			}},
		{name: "NewAdmin tenant mode 5", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := docket.NewAdmin(ctx, env.pool, docket.AdminConfig{TenantMode: 5})
				return err
			}},
		{name: "NewAdmin nil pool", want: []error{docket.ErrInvalidConfig}, local: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := docket.NewAdmin(ctx, nil, docket.AdminConfig{})
				return err
			}},
		{name: "NewAdmin cancelled context", want: []error{context.Canceled}, local: true, cancelled: true,
			call: func(ctx context.Context, env *hardInputEnv) error {
				_, err := docket.NewAdmin(ctx, env.pool, docket.AdminConfig{})
				return err
			}},
	}
}

package docket_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// errNoDatabaseInUnitTests is what the counting pool's connection hook
// returns: these tests must never reach a server.
var errNoDatabaseInUnitTests = errors.New("unit test: no database")

// countingPool returns a pool that never connects and counts every attempt.
func countingPool(t *testing.T) (*pgxpool.Pool, *atomic.Int64) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig("postgres://docket@127.0.0.1:1/docket")
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	cfg.BeforeConnect = func(context.Context, *pgx.ConnConfig) error {
		attempts.Add(1)
		return errNoDatabaseInUnitTests
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, &attempts
}

func TestConfigRejectedBeforeAnyDatabaseAccess(t *testing.T) {
	cases := []struct {
		name   string
		cfg    docket.Config
		alsoIs error
	}{
		{name: "required with omitted policy", cfg: docket.Config{TenantMode: docket.TenantRequired}},
		{name: "required with Legacy", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.Legacy{}}},
		{name: "required with *Legacy", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: &policy.Legacy{}}},
		{name: "required with zero-value TenantFair", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{}}, alsoIs: docket.ErrInvalidCap},
		{name: "cap 0", cfg: tenantFair(docket.TenantRequired, 0), alsoIs: docket.ErrInvalidCap},
		{name: "cap -1", cfg: tenantFair(docket.TenantRequired, -1), alsoIs: docket.ErrInvalidCap},
		{name: "cap above range", cfg: tenantFair(docket.TenantRequired, docket.MaxCap+1), alsoIs: docket.ErrInvalidCap},
		{name: "cap 0 under tenant mode none", cfg: tenantFair(docket.TenantNone, 0), alsoIs: docket.ErrInvalidCap},
		{name: "nil *TenantFair", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: (*policy.TenantFair)(nil)}},
		{name: "pointer TenantFair with cap 0", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: &policy.TenantFair{}}, alsoIs: docket.ErrInvalidCap},
		{name: "unknown tenant mode", cfg: docket.Config{TenantMode: docket.TenantMode(7)}},
		{name: "unknown policy", cfg: docket.Config{ClaimPolicy: unknownPolicy{}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, attempts := countingPool(t)
			client, err := docket.Open(context.Background(), pool, tc.cfg)
			if !errors.Is(err, docket.ErrInvalidConfig) {
				t.Fatalf("Open error = %v, want ErrInvalidConfig", err)
			}
			if tc.alsoIs != nil && !errors.Is(err, tc.alsoIs) {
				t.Fatalf("Open error = %v, want it to match %v too", err, tc.alsoIs)
			}
			if client != nil {
				t.Fatalf("Open returned a client with an error")
			}
			if n := attempts.Load(); n != 0 {
				t.Fatalf("Open made %d connection attempts before rejecting the config", n)
			}
		})
	}
}

func TestValidConfigReachesTheDatabase(t *testing.T) {
	cases := []struct {
		name string
		cfg  docket.Config
	}{
		{name: "mode none with omitted policy (Legacy)", cfg: docket.Config{}},
		{name: "mode none with Legacy", cfg: docket.Config{ClaimPolicy: policy.Legacy{}}},
		{name: "mode none with TenantFair", cfg: tenantFair(docket.TenantNone, 4)},
		{name: "required with cap 1", cfg: tenantFair(docket.TenantRequired, 1)},
		{name: "required with the largest cap", cfg: tenantFair(docket.TenantRequired, docket.MaxCap)},
		{name: "required with *TenantFair", cfg: docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: &policy.TenantFair{DefaultMaxActiveRuns: 4}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool, attempts := countingPool(t)
			_, err := docket.Open(context.Background(), pool, tc.cfg)
			if errors.Is(err, docket.ErrInvalidConfig) {
				t.Fatalf("valid config rejected: %v", err)
			}
			if !errors.Is(err, errNoDatabaseInUnitTests) {
				t.Fatalf("Open error = %v, want the connection hook's error", err)
			}
			if attempts.Load() == 0 {
				t.Fatalf("a valid config never reached the database")
			}
		})
	}
}

func TestOpenRejectsNilPool(t *testing.T) {
	_, err := docket.Open(context.Background(), nil, docket.Config{})
	if !errors.Is(err, docket.ErrInvalidConfig) {
		t.Fatalf("Open(nil pool) error = %v, want ErrInvalidConfig", err)
	}
}

func tenantFair(mode docket.TenantMode, defaultCap int) docket.Config {
	return docket.Config{TenantMode: mode, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap}}
}

// unknownPolicy is a ClaimPolicy that Open does not implement; it borrows
// the sealed methods of Legacy but is not Legacy.
type unknownPolicy struct{ policy.Legacy }

func (unknownPolicy) Name() string { return "unknown" }

package testkit

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// StartupPolicy is the persisted singleton policy row; 0 and "" stand for
// NULL. Values compare with ==.
type StartupPolicy struct {
	Mode          string
	MaxActive     int64
	Configured    int64
	Version       int64
	InitializedAt string
	UpdatedAt     string
	RowVersion    string // xmin: changes with every write of the row
}

// StartupReadPolicy reads the claim policy row of docket_claim_policy.
func StartupReadPolicy(t testing.TB, pool *pgxpool.Pool) StartupPolicy {
	t.Helper()
	var p StartupPolicy
	err := pool.QueryRow(Context(t), `select admission_mode, coalesce(max_active, 0), coalesce(configured_max_active, 0),
		policy_version, coalesce(initialized_at::text, ''), updated_at::text, xmin::text from docket_claim_policy`).
		Scan(&p.Mode, &p.MaxActive, &p.Configured, &p.Version, &p.InitializedAt, &p.UpdatedAt, &p.RowVersion)
	if err != nil {
		t.Fatalf("read policy: %v", err)
	}
	return p
}

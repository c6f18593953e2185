package testkit

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// GrantsFile is the documented least-privilege script, relative to a test
// package under tests/ (the directory go test runs it in).
const GrantsFile = "../../docs/grants.sql"

// CreateRole creates a LOGIN role with a random name and password and
// drops it, with everything granted to it in owner's database, when the test
// ends. Roles are cluster-wide, so the name must not collide with a
// concurrent test.
func CreateRole(t testing.TB, owner *pgxpool.Pool) (role, password string) {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	role = fmt.Sprintf("hard_app_%d_%s", os.Getpid(), hex.EncodeToString(b[:3]))
	password = hex.EncodeToString(b[3:]) + "pw"
	ExecSQL(t, owner, "create role "+pgx.Identifier{role}.Sanitize()+" login password '"+password+"'")
	t.Cleanup(func() {
		ident := pgx.Identifier{role}.Sanitize()
		if _, err := owner.Exec(Context(t), "drop owned by "+ident+"; drop role "+ident); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	return role, password
}

// GrantsScript reads the documented grants script.
func GrantsScript(t testing.TB) string {
	t.Helper()
	script, err := os.ReadFile(GrantsFile)
	if err != nil {
		t.Fatalf("read %s: %v", GrantsFile, err)
	}
	return string(script)
}

// ApplyGrants runs a grants script for role on schema, as psql would
// with -v schema=... -v role=... in database dbname.
func ApplyGrants(t testing.TB, owner *pgxpool.Pool, script, schema, role, dbname string) {
	t.Helper()
	sql := strings.NewReplacer(
		`:"schema"`, pgx.Identifier{schema}.Sanitize(),
		`:"role"`, pgx.Identifier{role}.Sanitize(),
		`:"DBNAME"`, pgx.Identifier{dbname}.Sanitize(),
	).Replace(script)
	if strings.Contains(sql, `:"`) {
		t.Fatalf("%s uses a psql variable the test does not know", GrantsFile)
	}
	ExecSQL(t, owner, sql)
}

// RolePool opens a pool on databaseURL that logs in as role and resolves
// names in schema.
func RolePool(t testing.TB, databaseURL, role, password, schema string) *pgxpool.Pool {
	t.Helper()
	cfg := PoolConfig(t, databaseURL, 8)
	cfg.ConnConfig.User = role
	cfg.ConnConfig.Password = password
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	return Pool(t, cfg)
}

// ExpectRingExact requires every schedule counter to equal the number
// of running and waiting runs of its scope.
func ExpectRingExact(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	var wrong string
	err := pool.QueryRow(Context(t), `select coalesce(string_agg(format('%s: %s counted, %s unfinished',
			s.scope_key, s.unfinished_count, coalesce(r.n, 0)), '; '), '')
		  from docket_claim_schedule s
		  left join (select scope_key, count(*) as n from docket_runs
		              where status in ('running', 'waiting') group by scope_key) r using (scope_key)
		 where s.unfinished_count <> coalesce(r.n, 0)`).Scan(&wrong)
	if err != nil {
		t.Fatalf("ring check: %v", err)
	}
	if wrong != "" {
		t.Fatalf("ring counters are not exact: %s", wrong)
	}
}

// AppSchema is the Docket schema of the least-privilege test.
const AppSchema = "hard_app_domain"

// SQLSTATEs a refused write by the application role raises.
const (
	InsufficientPrivilege = "42501"
	GeneratedAlways       = "428C9"
)

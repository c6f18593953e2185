// Package pgbouncer launches a throwaway PgBouncer in front of one PostgreSQL
// database, for tests that prove Docket works behind a transaction-pooling
// connection pooler.
//
// The bouncer listens only on 127.0.0.1 on a free port, accepts any client
// without authentication (auth_type any) and logs into the upstream database
// as the single user named by the upstream URL, so it never holds more than
// one pool. It runs in the foreground as a child process; Stop ends it and
// deletes its directory. When the process runs as root, PgBouncer refuses to
// stay root, so it switches to an unprivileged user (Options.RunAs).
package pgbouncer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotInstalled reports that no pgbouncer binary was found.
var ErrNotInstalled = errors.New("pgbouncer: no pgbouncer binary on PATH or in /usr/sbin (Debian: apt-get install pgbouncer)")

// readyTimeout bounds the wait for the bouncer to answer a query.
const readyTimeout = 30 * time.Second

// Options configures Start.
type Options struct {
	// Upstream is the URL of the PostgreSQL database to pool; its user and
	// password are the ones the bouncer logs in with.
	Upstream string
	// Database is the database name clients connect to; "" means "docket".
	Database string
	// PoolMode is session, transaction or statement; "" means transaction.
	PoolMode string
	// PoolSize is the number of server connections; 0 means 2.
	PoolSize int
	// RunAs is the Unix user to switch to when running as root; "" means
	// "nobody".
	RunAs string
}

// Bouncer is a running PgBouncer.
type Bouncer struct {
	bin      string
	cmd      *exec.Cmd
	dir      string
	port     int
	database string
	output   *syncBuffer
	exited   chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Binary returns the path of the pgbouncer binary, or ErrNotInstalled.
func Binary() (string, error) {
	if path, err := exec.LookPath("pgbouncer"); err == nil {
		return path, nil
	}
	const debian = "/usr/sbin/pgbouncer"
	if fi, err := os.Stat(debian); err == nil && fi.Mode().Perm()&0o111 != 0 {
		return debian, nil
	}
	return "", ErrNotInstalled
}

// Start writes a configuration for opts, starts PgBouncer on a free loopback
// port and waits until a query passes through it.
func Start(ctx context.Context, opts Options) (*Bouncer, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	upstream, err := pgconn.ParseConfig(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: parse upstream URL: %w", err)
	}
	if opts.Database == "" {
		opts.Database = "docket"
	}
	if opts.PoolMode == "" {
		opts.PoolMode = "transaction"
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 2
	}
	runAs, err := runAccount(opts.RunAs)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "docket-pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("pgbouncer: create directory: %w", err)
	}
	port, err := freePort()
	if err == nil {
		err = writeConfig(dir, config{
			upstream: upstream, database: opts.Database, poolMode: opts.PoolMode,
			poolSize: opts.PoolSize, port: port, runAs: runAs,
		})
	}
	if err == nil {
		err = runAs.own(dir)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	b := &Bouncer{bin: bin, dir: dir, port: port, database: opts.Database, output: &syncBuffer{}}
	if err := b.launch(ctx); err != nil {
		_ = b.Stop()
		return nil, err
	}
	return b, nil
}

// launch starts the bouncer's process on its configuration and waits until
// a query passes through it.
func (b *Bouncer) launch(ctx context.Context) error {
	b.exited = make(chan struct{})
	b.cmd = exec.Command(b.bin, filepath.Join(b.dir, configFile))
	b.cmd.Dir = b.dir
	b.cmd.Stdout = b.output
	b.cmd.Stderr = b.output
	if err := b.cmd.Start(); err != nil {
		close(b.exited)
		return fmt.Errorf("pgbouncer: start %s: %w", b.bin, err)
	}
	exited := b.exited
	cmd := b.cmd
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	return b.waitReady(ctx)
}

// Kill ends PgBouncer at once with SIGKILL, as a crash would: every client
// connection is cut, mid-statement or not. Restart starts it again.
func (b *Bouncer) Kill() error {
	if err := b.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("pgbouncer: kill: %w", err)
	}
	<-b.exited
	return nil
}

// Restart starts a killed PgBouncer again on the same port and
// configuration and waits until a query passes through it.
func (b *Bouncer) Restart(ctx context.Context) error {
	return b.launch(ctx)
}

// URL returns a client URL for the pooled database.
func (b *Bouncer) URL() string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("docket"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)),
		Path:     "/" + b.database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the port the bouncer listens on (127.0.0.1 only).
func (b *Bouncer) Port() int { return b.port }

// Output returns what PgBouncer has logged so far.
func (b *Bouncer) Output() string { return b.output.String() }

// Stop terminates PgBouncer (SIGTERM: immediate shutdown, clients are cut)
// and deletes its directory. It is idempotent.
func (b *Bouncer) Stop() error {
	b.stopOnce.Do(func() {
		var errs []error
		select {
		case <-b.exited:
		default:
			if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("pgbouncer: signal: %w", err))
			}
			select {
			case <-b.exited:
			case <-time.After(10 * time.Second):
				_ = b.cmd.Process.Kill()
				<-b.exited
			}
		}
		if err := os.RemoveAll(b.dir); err != nil {
			errs = append(errs, fmt.Errorf("pgbouncer: remove directory: %w", err))
		}
		b.stopErr = errors.Join(errs...)
	})
	return b.stopErr
}

// waitReady runs "select 1" through the bouncer until it answers, the
// process exits or the deadline passes.
func (b *Bouncer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for {
		err := b.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-b.exited:
			return fmt.Errorf("pgbouncer: exited during startup (%v)\noutput:\n%s", b.cmd.ProcessState, b.Output())
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer: not ready on port %d: %w (last error: %w)\noutput:\n%s", b.port, ctx.Err(), err, b.Output())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (b *Bouncer) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(b.URL())
	if err != nil {
		return fmt.Errorf("parse bouncer URL: %w", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "select 1"); err != nil {
		return fmt.Errorf("select 1: %w", err)
	}
	return nil
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgbouncer: find free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pgbouncer: find free port: %w", err)
	}
	return port, nil
}

// syncBuffer is a bytes.Buffer safe for the child's writers and readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.TrimSpace(s.buf.String())
}

package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The exit codes of the docket command, as `docket help` documents them:
// the tests state the contract rather than import it.
const (
	// ExitOK is a command that did what it was asked.
	ExitOK = 0
	// ExitFailure is a runtime failure: the database, a refused write.
	ExitFailure = 1
	// ExitUsage is a usage error: unknown command, bad flags or arguments.
	ExitUsage = 2
	// ExitStale is a compare-and-set write that lost to a newer version.
	ExitStale = 3
)

// cliBinary is the docket binary of this test process, built on first use.
var cliBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// DocketBinary returns the path of the docket command built from this
// checkout's cmd/docket, once per test binary, into a temporary directory
// that Main removes after the tests. The tests run the command as a user
// does, as a process, since its packages are internal to cmd/docket.
func DocketBinary(t testing.TB) string {
	t.Helper()
	cliBinary.once.Do(func() {
		cliBinary.path, cliBinary.err = buildDocket()
	})
	if cliBinary.err != nil {
		t.Fatalf("building the docket command: %v", cliBinary.err)
	}
	return cliBinary.path
}

// buildDocket runs go build for cmd/docket inside the library's module,
// which the tests module replaces with the checkout it sits in.
func buildDocket() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/docketrun/docket-go").Output()
	if err != nil {
		return "", fmt.Errorf("locating the library's module: %w", err)
	}
	dir, err := os.MkdirTemp("", "docket-cli-")
	if err != nil {
		return "", err
	}
	cliBinary.dir = dir
	path := filepath.Join(dir, "docket")
	build := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/docket")
	build.Dir = strings.TrimSpace(string(root))
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/docket: %w\n%s", err, out)
	}
	return path, nil
}

// removeDocketBinary removes the directory DocketBinary built into.
func removeDocketBinary() {
	if cliBinary.dir != "" {
		_ = os.RemoveAll(cliBinary.dir)
	}
}

// CLIResult is one run of the docket command.
type CLIResult struct {
	Code   int
	Stdout string
	Stderr string
}

// CLIRun runs the docket command line with args and waits for it.
func CLIRun(t testing.TB, args ...string) CLIResult {
	t.Helper()
	return CLIRunEnv(t, nil, args...)
}

// CLIRunEnv is CLIRun with env ("NAME=value") added to the test's
// environment, for tests that run in parallel and so cannot set their own.
func CLIRunEnv(t testing.TB, env []string, args ...string) CLIResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(Context(t), DocketBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("docket %s: %v", strings.Join(args, " "), err)
	}
	return CLIResult{Code: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String()}
}

// CLIExpect runs args and requires the exit code and, when set, a fragment
// of stdout or stderr.
func CLIExpect(t testing.TB, code int, fragment string, args ...string) CLIResult {
	t.Helper()
	r := CLIRun(t, args...)
	if r.Code != code {
		t.Fatalf("docket %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, code, r.Stdout, r.Stderr)
	}
	if fragment != "" && !strings.Contains(r.Stdout+r.Stderr, fragment) {
		t.Fatalf("docket %s: output lacks %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), fragment, r.Stdout, r.Stderr)
	}
	return r
}

// CLIProcess is a docket command left running: a long-running one such as
// "docket console" or "docket demo --keep".
type CLIProcess struct {
	// Stdout is the command's standard output as it writes it.
	Stdout io.Reader
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{}
	once   sync.Once
	code   int
}

// CLIStart starts the docket command with args. Interrupt stops it as
// Ctrl-C does; the test's end interrupts it too.
func CLIStart(t testing.TB, args ...string) *CLIProcess {
	t.Helper()
	cmd := exec.Command(DocketBinary(t), args...)
	// An os.Pipe of its own rather than StdoutPipe: Wait would close that
	// one when the command exits, losing what the test has not read yet.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdout.Close() })
	p := &CLIProcess{Stdout: stdout, cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w, p.stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatalf("docket %s: %v", strings.Join(args, " "), err)
	}
	t.Cleanup(func() { p.Interrupt(); <-p.done })
	go func() {
		p.code = -1
		if err := cmd.Wait(); err == nil || errors.As(err, new(*exec.ExitError)) {
			p.code = cmd.ProcessState.ExitCode()
		}
		close(p.done)
	}()
	return p
}

// Interrupt sends the command SIGINT, as Ctrl-C does; once is enough.
func (p *CLIProcess) Interrupt() {
	p.once.Do(func() { _ = p.cmd.Process.Signal(os.Interrupt) })
}

// Wait waits for the command to exit and returns its exit code and
// standard error; Stdout keeps what the caller has not read yet.
func (p *CLIProcess) Wait() (code int, stderr string) {
	<-p.done
	return p.code, p.stderr.String()
}

//go:build unix

package pglocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// sysProcAttr makes a child process run as acct; nil keeps the caller's
// identity.
func sysProcAttr(acct *account) *syscall.SysProcAttr {
	if acct == nil {
		return nil
	}
	return &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: acct.uid, Gid: acct.gid, NoSetGroups: true},
	}
}

// lockFile takes an exclusive advisory lock on path (created if missing),
// polling so that ctx can end the wait. The returned func releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("wait for lock %s: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// signalQuit asks a postmaster for an immediate shutdown.
func signalQuit(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGQUIT); err != nil {
		return fmt.Errorf("signal %d: %w", pid, err)
	}
	return nil
}

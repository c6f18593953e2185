//go:build !unix

package pglocal

import (
	"context"
	"errors"
	"syscall"
)

// sysProcAttr is a no-op where Unix credentials do not exist.
func sysProcAttr(*account) *syscall.SysProcAttr { return nil }

// lockFile is a no-op where flock does not exist; concurrent fetches into one
// cache may then collide.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }

// processAlive conservatively reports every process as alive, so nothing is
// reaped.
func processAlive(int) bool { return true }

// signalQuit is unsupported here.
func signalQuit(int) error { return errors.New("pglocal: signals unsupported on this OS") }

package cli

import (
	"context"
	"errors"

	"github.com/docketrun/docket-go/docket"
)

// withAdmin resolves the connection, opens a pool and an Admin on it and
// runs fn, the one job of the policy, runs and tenants commands. Failures
// are reported under label (say "policy get"): a bad URL as a usage error, a
// failed connection as a runtime error, and fn's error with exitCode; an
// uninitialized policy also says what to run first.
func withAdmin(ctx context.Context, conn connectionFlags, label string, out output, exitCode func(error) int, fn func(*docket.Admin) error) int {
	databaseURL, err := conn.url()
	if err != nil {
		return out.failf(ExitUsage, "%s: %v", label, err)
	}
	pool, err := openPool(ctx, databaseURL, conn.domainSchema())
	if err != nil {
		return out.failf(ExitFailure, "%s: %v", label, err)
	}
	defer pool.Close()
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{})
	if err == nil {
		err = fn(admin)
	}
	switch {
	case errors.Is(err, docket.ErrNotInitialized):
		return out.failf(exitCode(err), "%s: %v\n%s", label, err, notInitializedHint)
	case err != nil:
		return out.failf(exitCode(err), "%s: %v", label, err)
	}
	return ExitOK
}

package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/pglocal"
)

// cleanupTimeout bounds removing what the demo created, which runs even
// after its context was cancelled.
const cleanupTimeout = time.Minute

// openDatabase returns the URL the demo works in and a function that
// removes whatever openDatabase started: the throwaway local server when
// o.DatabaseURL is empty, nothing otherwise.
func openDatabase(ctx context.Context, o Options) (string, func() error, error) {
	if o.DatabaseURL != "" {
		return o.DatabaseURL, func() error { return nil }, nil
	}
	fmt.Fprintln(o.Out, "starting a throwaway local PostgreSQL (binaries are fetched on first use)")
	srv, err := pglocal.Start(ctx, pglocal.Options{Logf: func(format string, args ...any) {
		fmt.Fprintf(o.Out, "  postgres: "+format+"\n", args...)
	}})
	if err != nil {
		return "", nil, fmt.Errorf("start local PostgreSQL: %w", err)
	}
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			return fmt.Errorf("remove local PostgreSQL: %w", err)
		}
		fmt.Fprintln(o.Out, "removed the local PostgreSQL")
		return nil
	}
	return srv.URL("postgres"), stop, nil
}

// createSchema creates a fresh schema named after engine, with a random
// suffix so it never collides with (or later drops) an existing one, and
// returns its name and a function that drops it with everything in it.
func createSchema(ctx context.Context, databaseURL, engine string) (string, func() error, error) {
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("docket_demo_%s_%s", engine, hex.EncodeToString(suffix))
	if err := execAdmin(ctx, databaseURL, "create schema "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := execAdmin(ctx, databaseURL, "drop schema "+pgx.Identifier{name}.Sanitize()+" cascade"); err != nil {
			return fmt.Errorf("drop schema %s: %w", name, err)
		}
		return nil
	}
	return name, drop, nil
}

// execAdmin runs one statement on a connection of its own.
func execAdmin(ctx context.Context, databaseURL, sql string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(ctx))
}

package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
)

// Template databases: migrated once, cloned for every engine run so each
// starts on a fresh database with the same schema.
const (
	docketTemplate = "bench_docket_template"
	riverTemplate  = "bench_river_template"
)

// benchSettings are the server settings the scorecard adds to the
// launcher's defaults: room for the million-run table in memory and no
// checkpoint storm while it loads.
func benchSettings(profile bool) map[string]string {
	s := map[string]string{
		"shared_buffers":     "1GB",
		"max_wal_size":       "8GB",
		"checkpoint_timeout": "30min",
	}
	if profile {
		s["shared_preload_libraries"] = "pg_stat_statements"
		s["pg_stat_statements.track"] = "all"
		s["pg_stat_statements.max"] = "10000"
		s["track_io_timing"] = "on"
	}
	return s
}

// cluster is the throwaway server and the template databases on it.
type cluster struct {
	srv *pglocal.Server
	seq atomic.Int64
}

// startCluster starts the server under parent and builds both templates.
func startCluster(ctx context.Context, parent string, profile bool, logf func(string, ...any)) (*cluster, error) {
	srv, err := pglocal.Start(ctx, pglocal.Options{
		Logf:     func(format string, args ...any) { logf("postgres: "+format, args...) },
		Settings: benchSettings(profile),
		TempDir:  parent,
	})
	if err != nil {
		return nil, fmt.Errorf("start PostgreSQL: %w", err)
	}
	c := &cluster{srv: srv}
	if err := c.buildTemplates(ctx); err != nil {
		return nil, errors.Join(err, c.stop())
	}
	return c, nil
}

// cpu is the meter of the server's and the bench's CPU time.
func (c *cluster) cpu() cpuMeter { return cpuMeter{dataDir: c.srv.DataDir()} }

// stop removes the server and its data.
func (c *cluster) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return c.srv.Stop(ctx)
}

// buildTemplates migrates the Docket and the River template databases.
func (c *cluster) buildTemplates(ctx context.Context) error {
	if err := c.admin(ctx, "create database "+docketTemplate); err != nil {
		return err
	}
	docketMigrator, err := docket.NewMigratorURL(c.srv.URL(docketTemplate), docket.MigratorConfig{Schema: "public"})
	if err != nil {
		return fmt.Errorf("migrate docket template: %w", err)
	}
	if err := docketMigrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		return fmt.Errorf("migrate docket template: %w", err)
	}
	if err := c.admin(ctx, "create database "+riverTemplate); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, c.srv.URL(riverTemplate))
	if err != nil {
		return err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river template: %w", err)
	}
	return nil
}

// admin runs one statement in the maintenance database.
func (c *cluster) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.srv.URL("postgres"))
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(ctx))
}

// cloneDatabase creates a fresh database from template and returns its name
// and a function that drops it.
func (c *cluster) cloneDatabase(ctx context.Context, template, label string) (string, func() error, error) {
	name := fmt.Sprintf("bench_%s_%03d", label, c.seq.Add(1))
	if err := c.admin(ctx, fmt.Sprintf("create database %s template %s",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{template}.Sanitize())); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop := func() error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		return c.admin(ctx, fmt.Sprintf("drop database %s with (force)", pgx.Identifier{name}.Sanitize()))
	}
	return name, drop, nil
}

// openPool opens a pool of at most maxConns connections on database.
func (c *cluster) openPool(ctx context.Context, database string, maxConns int) (*pgxpool.Pool, error) {
	return c.openTracedPool(ctx, database, maxConns, nil)
}

// openTracedPool is openPool with tracer (nil: none) on every connection.
func (c *cluster) openTracedPool(ctx context.Context, database string, maxConns int, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(c.srv.URL(database))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(maxConns)
	cfg.ConnConfig.Tracer = tracer
	return pgxpool.NewWithConfig(ctx, cfg)
}

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// engineName names one engine under test.
type engineName string

// The engines: Docket's two admission engines, TenantFair in parked mode,
// and River.
const (
	engineTenantFair       engineName = "tenant_fair"
	engineTenantFairParked engineName = "tenant_fair_parked"
	engineLegacy           engineName = "legacy"
	engineRiver            engineName = "river"
)

// uncappedCap is TenantFair's default cap where caps must not bind.
const uncappedCap = 1000000

// docketEnv is a Docket client on a fresh database of its own.
type docketEnv struct {
	engine engineName
	pool   *pgxpool.Pool
	client *docket.Client
	drop   func() error
}

// docketConfig is the client configuration of engine: TenantFair with
// required tenancy and default cap maxActive (in parked mode for
// engineTenantFairParked), or Legacy with tenant mode none.
func docketConfig(engine engineName, maxActive int) docket.Config {
	switch engine {
	case engineTenantFair, engineTenantFairParked:
		return docket.Config{TenantMode: docket.TenantRequired,
			ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: maxActive, ParkDormant: engine == engineTenantFairParked}}
	}
	return docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}}
}

// openDocket clones the Docket template and opens a client of engine on it
// with a pool of maxConns connections.
func openDocket(ctx context.Context, c *cluster, engine engineName, maxActive, maxConns int) (*docketEnv, error) {
	if engine != engineTenantFair && engine != engineTenantFairParked && engine != engineLegacy {
		return nil, fmt.Errorf("%s is not a Docket engine", engine)
	}
	return openDocketConfig(ctx, c, engine, docketConfig(engine, maxActive), maxConns)
}

// openDocketConfig clones the Docket template and opens a client of cfg on
// it with a pool of maxConns connections; engine names the database.
func openDocketConfig(ctx context.Context, c *cluster, engine engineName, cfg docket.Config, maxConns int) (*docketEnv, error) {
	db, drop, err := c.cloneDatabase(ctx, docketTemplate, string(engine))
	if err != nil {
		return nil, err
	}
	env, err := openDocketOn(ctx, c, db, engine, cfg, maxConns, nil, drop)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	return env, nil
}

// openDocketOn opens a pool of maxConns connections on database db, traced
// by tracer (nil: none), and a client of cfg on it; the environment's close
// closes the pool, then calls drop.
func openDocketOn(ctx context.Context, c *cluster, db string, engine engineName, cfg docket.Config, maxConns int, tracer pgx.QueryTracer, drop func() error) (*docketEnv, error) {
	pool, err := c.openTracedPool(ctx, db, maxConns, tracer)
	if err != nil {
		return nil, err
	}
	client, err := docket.Open(ctx, pool, cfg)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &docketEnv{engine: engine, pool: pool, client: client, drop: drop}, nil
}

// keepDatabase is the drop of an environment that shares its database with
// others: closing it leaves the database to whoever owns it.
func keepDatabase() error { return nil }

// close closes the pool and drops the database.
func (e *docketEnv) close() error {
	e.pool.Close()
	return e.drop()
}

// exec runs one statement on the environment's database.
func (e *docketEnv) exec(ctx context.Context, sql string, args ...any) error {
	_, err := e.pool.Exec(ctx, sql, args...)
	return err
}

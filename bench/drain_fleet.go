package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
)

// fleetPoolConns is the pool size of one fleet member of slots claim slots
// (its concurrency and the runs it claims ahead): the drain's room (claims,
// commits, heartbeats, LISTEN session, checks) for its own slots.
func fleetPoolConns(slots int) int { return 2*slots + 4 }

// fleetDrain is a fleet of drain targets on one database, each on a pool
// and a client of its own, as separate processes would have them; they are
// started and stopped together. The first member inserts and counts.
type fleetDrain struct {
	members []drainTarget
	// database is the name of the fleet's database.
	database string
	drop     func() error
}

// fleetSetup is the shape of one fleet.
type fleetSetup struct {
	engine engineName
	// members Workers (or River clients) of concurrency each.
	members, concurrency int
	// maxActive is the Docket clients' default cap, fetch the River
	// clients' fetch configuration.
	maxActive int
	fetch     riverFetch
	// verdictWait and claimAhead are the Docket Workers' VerdictBatchWait
	// and ClaimAhead.
	verdictWait time.Duration
	claimAhead  int
	// tracer is set on every member's pool; meter, when set, receives
	// every Docket client's metrics.
	tracer *callTracer
	meter  *sdkmetric.MeterProvider
}

// newFleetDrain opens s.engine on a fresh database with a fleet of s's
// members recording into b, every member on its own pool. Every client is
// open before any of them works.
func newFleetDrain(ctx context.Context, c *cluster, s fleetSetup, b *book) (*fleetDrain, error) {
	template := docketTemplate
	if s.engine == engineRiver {
		template = riverTemplate
	}
	db, drop, err := c.cloneDatabase(ctx, template, string(s.engine))
	if err != nil {
		return nil, err
	}
	f := &fleetDrain{database: db, drop: drop}
	conns := fleetPoolConns(s.concurrency + s.claimAhead)
	cfg := docketConfig(s.engine, s.maxActive)
	if s.meter != nil {
		cfg.MeterProvider = s.meter
	}
	for range s.members {
		var m drainTarget
		if s.engine == engineRiver {
			var env *riverEnv
			if env, err = openRiverOn(ctx, c, db, conns, s.tracer, keepDatabase); err == nil {
				m, err = newRiverDrainOn(env, s.fetch, b, s.concurrency)
			}
		} else {
			var env *docketEnv
			if env, err = openDocketOn(ctx, c, db, s.engine, cfg, conns, s.tracer, keepDatabase); err == nil {
				m, err = newDocketDrainOn(env, b, docket.WorkerConfig{Concurrency: s.concurrency, Tuning: docket.WorkerTuning{VerdictBatchWait: s.verdictWait, ClaimAhead: s.claimAhead}})
			}
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("member %d: %w", len(f.members)+1, err), f.close())
		}
		f.members = append(f.members, m)
	}
	return f, nil
}

func (f *fleetDrain) insert(ctx context.Context, runs []int) error {
	return f.members[0].insert(ctx, runs)
}

// start starts every member; when one fails, the ones started are stopped.
func (f *fleetDrain) start(ctx context.Context) error {
	for i, m := range f.members {
		if err := m.start(ctx); err != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
			defer cancel()
			return errors.Join(fmt.Errorf("member %d: %w", i+1, err), stopAll(stopCtx, f.members[:i]))
		}
	}
	return nil
}

func (f *fleetDrain) finished(ctx context.Context) (int64, error) {
	return f.members[0].finished(ctx)
}

func (f *fleetDrain) stop(ctx context.Context) error { return stopAll(ctx, f.members) }

// close closes every member's pool, then drops the database.
func (f *fleetDrain) close() error {
	var errs []error
	for _, m := range f.members {
		errs = append(errs, m.close())
	}
	return errors.Join(append(errs, f.drop())...)
}

// stopAll stops targets concurrently, as separate processes would stop.
func stopAll(ctx context.Context, targets []drainTarget) error {
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() { errs[i] = t.stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

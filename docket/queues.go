package docket

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ListDomains returns the schemas of pool's database that hold a Docket
// domain, sorted by name: the queues an app opens with Config.Schema (one
// Client each) and an operator addresses with --schema. It reads the catalog
// alone, on any search_path, and writes nothing.
func ListDomains(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	if pool == nil {
		return nil, invalidArgument("nil pool")
	}
	domains, err := dbgen.New(pool).ListDomains(ctx)
	if err != nil {
		return nil, fmt.Errorf("docket: listing domains: %w", err)
	}
	return domains, nil
}

// Queues runs the Workers of several queues of one process as one: each
// queue is a fairness domain (its own schema, Client, ring, cursor, default
// cap and overrides), each Worker keeps its own concurrency, handlers and
// retry policy, and the Clients may share one pool, logger and tracer. Run
// starts them together and Stop stops and drains them together. A run
// inserted in one queue is claimed only by that queue's Workers.
type Queues struct {
	workers []*Worker
}

// NewQueues groups workers, each not yet running. It refuses no worker, a
// nil one and one given twice with ErrInvalidConfig.
func NewQueues(workers ...*Worker) (*Queues, error) {
	if len(workers) == 0 {
		return nil, invalidConfig("queues: no worker")
	}
	seen := make(map[*Worker]bool, len(workers))
	for i, w := range workers {
		switch {
		case w == nil:
			return nil, invalidConfig("queues: worker at index %d is nil", i)
		case seen[w]:
			return nil, invalidConfig("queues: worker at index %d is given twice", i)
		}
		seen[w] = true
	}
	return &Queues{workers: append([]*Worker(nil), workers...)}, nil
}

// Run runs every worker until ctx ends or Stop is called, and returns when
// all of them have returned, with their errors joined (see Worker.Run).
func (q *Queues) Run(ctx context.Context) error {
	return q.each(func(w *Worker) error { return w.Run(ctx) })
}

// Stop stops every worker at once and waits for all of them to drain (see
// Worker.Stop: running handlers finish until ctx ends, the rest are
// cancelled and handed back); it returns their errors joined.
func (q *Queues) Stop(ctx context.Context) error {
	return q.each(func(w *Worker) error { return w.Stop(ctx) })
}

// each calls fn for every worker concurrently and joins the errors.
func (q *Queues) each(fn func(*Worker) error) error {
	errs := make([]error, len(q.workers))
	var wg sync.WaitGroup
	for i, w := range q.workers {
		wg.Go(func() { errs[i] = fn(w) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

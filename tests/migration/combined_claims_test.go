package migration

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// combinedPast is the claim time of the combined-claim scenarios: nothing
// is due then, so their calls lease nothing.
var combinedPast = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// waitingCombined opens a client of cfg on pool, makes a transaction of its
// own the domain's combiner (prefix qualifies the combined function), and
// starts a ClaimDue of demand one on ctx that announces its demand and
// waits. It returns the combiner's transaction and the call's answer once
// the call waits.
func waitingCombined(ctx, callCtx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) (pgx.Tx, <-chan error, error) {
	client, err := docket.Open(ctx, pool, cfg)
	if err != nil {
		return nil, nil, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.Exec(ctx, `select * from `+prefix+`docket_tenant_fair_claim_combined($1::timestamptz, $1::timestamptz - interval '1 hour', 1, 5, null)`,
		combinedPast); err != nil {
		_ = tx.Rollback(ctx)
		return nil, nil, fmt.Errorf("combiner: %w", err)
	}
	answer := make(chan error, 1)
	go func() {
		_, err := client.ClaimDue(callCtx, docket.ClaimRequest{Now: combinedPast, Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
		answer <- err
	}()
	// A call that fails before it waits (a missing grant, say) ends the
	// wait for its marker.
	awaitCtx, stop := context.WithCancel(ctx)
	defer stop()
	awaited := make(chan error, 1)
	go func() { awaited <- testkit.AwaitCombinedWaiter(awaitCtx, pool) }()
	select {
	case err := <-awaited:
		if err != nil {
			_ = tx.Rollback(ctx)
			return nil, nil, fmt.Errorf("the claim does not wait for the combiner: %w", err)
		}
		return tx, answer, nil
	case err := <-answer:
		stop()
		<-awaited
		_ = tx.Rollback(ctx)
		return nil, nil, fmt.Errorf("the waiting claim returned before it waited: %w", err)
	}
}

// combinedWait sends the statements of a combined claim whose wait is
// cancelled: the call announces its demand and waits for a combiner, its
// context ends, and no delivery is left behind.
func combinedWait(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) error {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	tx, answer, err := waitingCombined(ctx, callCtx, pool, cfg, prefix)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	cancel()
	if err := <-answer; !errors.Is(err, context.Canceled) {
		return fmt.Errorf("the cancelled waiting claim: %v, want context.Canceled", err)
	}
	return deliveriesLeft(ctx, tx, prefix)
}

// combinedServe runs a combined claim served by its combiner (prefix
// qualifies the combined function and the delivery table): the call
// announces its demand, the combiner's next call reads its marker, serves it
// and commits, and the waiter collects its (empty) outcomes, leaving no
// delivery behind.
func combinedServe(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) error {
	tx, answer, err := waitingCombined(ctx, ctx, pool, cfg, prefix)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `select * from `+prefix+`docket_tenant_fair_claim_combined($1::timestamptz, $1::timestamptz - interval '1 hour', 1, 5, null)`,
		combinedPast); err != nil {
		return fmt.Errorf("serving combiner: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if err := <-answer; err != nil {
		return fmt.Errorf("the served claim: %w", err)
	}
	return deliveriesLeft(ctx, pool, prefix)
}

// deliveriesLeft fails when any claim delivery is left.
func deliveriesLeft(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, prefix string) error {
	var left int64
	if err := q.QueryRow(ctx, `select count(*) from `+prefix+`docket_claim_deliveries`).Scan(&left); err != nil {
		return err
	}
	if left != 0 {
		return fmt.Errorf("%d claim deliveries left, want 0", left)
	}
	return nil
}

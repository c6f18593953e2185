package migration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
// starts a ClaimDue of demand one on ctx that files a request and waits. It
// returns the combiner's transaction and the call's answer once the
// request is filed.
func waitingCombined(ctx, callCtx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) (pgx.Tx, <-chan error, error) {
	filed := make(testkit.RequestFiled, 1)
	cfg.Logger = slog.New(filed)
	client, err := docket.Open(ctx, pool, cfg)
	if err != nil {
		return nil, nil, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, err := tx.Exec(ctx, `select * from `+prefix+`docket_tenant_fair_claim_combined($1::timestamptz, $1::timestamptz - interval '1 hour', 1, 5, null, null)`,
		combinedPast); err != nil {
		_ = tx.Rollback(ctx)
		return nil, nil, fmt.Errorf("combiner: %w", err)
	}
	answer := make(chan error, 1)
	go func() {
		_, err := client.ClaimDue(callCtx, docket.ClaimRequest{Now: combinedPast, Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
		answer <- err
	}()
	select {
	case <-filed:
		return tx, answer, nil
	case err := <-answer:
		_ = tx.Rollback(ctx)
		return nil, nil, fmt.Errorf("the waiting claim returned before it filed a request: %w", err)
	}
}

// combinedWait sends the statements of a combined claim whose wait is
// cancelled: the request is filed, the call waits for a combiner, its
// context ends and the request is withdrawn, leaving none behind.
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
	return requestsLeft(ctx, tx, prefix)
}

// combinedServe runs a combined claim served by its combiner: the request
// is filed, the combiner's next call serves it and commits, and the waiter
// collects its (empty) outcomes, leaving no request behind.
func combinedServe(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config) error {
	tx, answer, err := waitingCombined(ctx, ctx, pool, cfg, "")
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `select * from docket_tenant_fair_claim_combined($1::timestamptz, $1::timestamptz - interval '1 hour', 1, 5, null, null)`,
		combinedPast); err != nil {
		return fmt.Errorf("serving combiner: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if err := <-answer; err != nil {
		return fmt.Errorf("the served claim: %w", err)
	}
	return requestsLeft(ctx, pool, "")
}

// requestsLeft fails when any claim request is left.
func requestsLeft(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, prefix string) error {
	var left int64
	if err := q.QueryRow(ctx, `select count(*) from `+prefix+`docket_claim_requests`).Scan(&left); err != nil {
		return err
	}
	if left != 0 {
		return fmt.Errorf("%d claim requests left, want 0", left)
	}
	return nil
}

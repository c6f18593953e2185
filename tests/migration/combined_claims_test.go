package migration

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// sqlstateQueryCanceled is PostgreSQL's query_canceled: a statement the
// server cancelled on request.
const sqlstateQueryCanceled = "57014"

// combinedPast is the claim time of the combined-claim scenarios: nothing
// is due then, so their calls lease nothing.
var combinedPast = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// waitingCombined opens a client of cfg on pool, makes a transaction of its
// own the domain's combiner (prefix qualifies the combined function), and
// starts a ClaimDue of demand one that announces its demand and waits. It
// returns the combiner's transaction, the call's answer and the backend
// that waits, once the call waits; it fails when another call waits too.
func waitingCombined(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) (pgx.Tx, <-chan error, int32, error) {
	client, err := docket.Open(ctx, pool, cfg)
	if err != nil {
		return nil, nil, 0, err
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	if _, err := tx.Exec(ctx, `select * from `+prefix+`docket_tenant_fair_claim_combined($1::timestamptz, $1::timestamptz - interval '1 hour', 1, 5, null)`,
		combinedPast); err != nil {
		_ = tx.Rollback(ctx)
		return nil, nil, 0, fmt.Errorf("combiner: %w", err)
	}
	answer := make(chan error, 1)
	go func() {
		_, err := client.ClaimDue(ctx, docket.ClaimRequest{Now: combinedPast, Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
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
			return nil, nil, 0, fmt.Errorf("the claim does not wait for the combiner: %w", err)
		}
	case err := <-answer:
		stop()
		<-awaited
		_ = tx.Rollback(ctx)
		return nil, nil, 0, fmt.Errorf("the waiting claim returned before it waited: %w", err)
	}
	pids, err := testkit.CombinedWaiterPIDs(ctx, pool)
	if err != nil || len(pids) != 1 {
		_ = tx.Rollback(ctx)
		return nil, nil, 0, fmt.Errorf("waiting claim calls %v (%v), want exactly this scenario's one", pids, err)
	}
	return tx, answer, pids[0], nil
}

// combinedWait sends the statements of a combined claim whose wait is
// cancelled: the call announces its demand and waits for a combiner, the
// server cancels its statement (as a pool that sends cancel requests when
// a context ends does, docs/operations.md), and no delivery or marker is
// left behind. The scenario goes on only once the call's backend has
// rolled its statement back, so nothing of it outlives the scenario: a
// call whose context merely ended goes on running on the server until
// pgx's own cancel request reaches it, and on a loaded machine it waited
// again for the next scenario's combiner and left a delivery there.
func combinedWait(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) error {
	tx, answer, pid, err := waitingCombined(ctx, pool, cfg, prefix)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := testkit.EndBackend(ctx, pool, pid); err != nil {
		return err
	}
	err = <-answer
	if !cancelledByServer(err) {
		return fmt.Errorf("the cancelled waiting claim: %v, want query_canceled", err)
	}
	if err := deliveriesLeft(ctx, tx, prefix); err != nil {
		return err
	}
	pids, err := testkit.CombinedWaiterPIDs(ctx, pool)
	if err != nil || len(pids) != 0 {
		return fmt.Errorf("waiting claim calls after the cancel: %v (%v), want none", pids, err)
	}
	return nil
}

// combinedServe runs a combined claim served by its combiner (prefix
// qualifies the combined function and the delivery table): the call
// announces its demand, the combiner's next call reads its marker, serves it
// and commits, and the waiter collects its (empty) outcomes, leaving no
// delivery behind.
func combinedServe(ctx context.Context, pool *pgxpool.Pool, cfg docket.Config, prefix string) error {
	tx, answer, _, err := waitingCombined(ctx, pool, cfg, prefix)
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

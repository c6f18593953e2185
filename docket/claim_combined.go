package docket

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
)

// rowKindBusy is the one row a combined call's first try returns when the
// domain's cursor is held: nothing was read or changed.
const rowKindBusy = "busy"

// withdrawTimeout bounds the withdrawal of a request whose combined call
// failed: the call's own context may be over by then.
const withdrawTimeout = 5 * time.Second

// combines says whether this client's production claims go through the
// combined claim function: a TenantFair client without Config.SoloClaims.
func (c *Client) combines() bool {
	return c.engine.tenantFair && !c.config.SoloClaims
}

// claimCombined runs a production plan through a combined claim statement
// (TenantFairClaimCombined or its noted form, claimSQL) as a claim batch. A
// first try never waits: when the domain's cursor is held it returns busy,
// and the call files its demand as a claim request in a transaction of its
// own, then sends the statement again with the request's id, which waits
// for the cursor and returns the outcomes the holder served it or, when no
// holder did, those of its own walk for every pending request. A request
// whose call fails before it is collected is withdrawn.
func (c *Client) claimCombined(ctx context.Context, p claimpolicy.Plan, claimSQL string,
	more func(*pgx.Batch), readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	rows, err := c.claimBatch(ctx, p, claimSQL, []any{nil}, more, readMore)
	if err != nil || !isBusy(rows) {
		return rows, err
	}
	request, err := c.fileClaimRequest(ctx, p)
	if err != nil {
		return nil, err
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "docket claim request filed",
		slog.Int64("request", request), slog.Int("demand", int(p.Args.Demand)))
	rows, err = c.claimBatch(ctx, p, claimSQL, []any{request}, more, readMore)
	if err != nil {
		c.withdrawClaimRequest(ctx, request)
		return nil, err
	}
	if isBusy(rows) {
		return nil, fmt.Errorf("%w: a combined claim call with request %d answered busy", claimpolicy.ErrMalformedRow, request)
	}
	return rows, nil
}

// isBusy says whether rows are a first try's answer that the cursor is held.
func isBusy(rows []claimpolicy.Row) bool {
	return len(rows) == 1 && rows[0].RowKind != nil && *rows[0].RowKind == rowKindBusy
}

// fileClaimRequest files plan p's demand, TTL, attempts and preference as a
// claim request and returns its id. The request lives for a few
// milliseconds and is worth nothing after a crash, so its transaction never
// waits for its WAL flush.
func (c *Client) fileClaimRequest(ctx context.Context, p claimpolicy.Plan) (int64, error) {
	batch := &pgx.Batch{}
	settings := 0
	if c.names != nil {
		batch.Queue(sqlschema.ScopeSearchPath, c.names.SearchPath())
		settings++
	}
	batch.Queue(dbgen.CommitClaimAsynchronously)
	settings++
	a := p.Args
	batch.Queue(c.qualified(dbgen.FileClaimRequest), a.Now, a.Cutoff, a.Demand, a.MaxAttempts, a.Preference)
	results := c.pool.SendBatch(ctx, batch)
	var request int64
	err := func() error {
		for range settings {
			if _, err := results.Exec(); err != nil {
				return err
			}
		}
		return results.QueryRow().Scan(&request)
	}()
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	return request, err
}

// withdrawClaimRequest deletes a request its call no longer waits for, if
// no holder served it yet, on a context of its own: the call's may be what
// ended it. A failed withdrawal is logged; the request then expires unserved
// or, if a holder serves it first, its leases expire after their claim TTL.
func (c *Client) withdrawClaimRequest(ctx context.Context, request int64) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if err := c.queries.WithdrawClaimRequest(wctx, request); err != nil {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "docket claim request not withdrawn",
			slog.Int64("request", request), slog.String("error", err.Error()))
	}
}

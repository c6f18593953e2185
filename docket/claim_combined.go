package docket

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// rowKindBusy is the one row a combined call's first try returns when
// another call is combining: it filed the caller's demand as a request and
// leased nothing.
const rowKindBusy = "busy"

// withdrawTimeout bounds the withdrawal of a request whose combined call
// failed: the call's own context may be over by then.
const withdrawTimeout = 5 * time.Second

// combinedRow is a row of a combined claim statement: a production claim
// row, then the id of the request a busy row filed.
type combinedRow struct {
	claimpolicy.Row
	Request *int64
}

// combines says whether this client's production claims go through the
// combined claim function: a TenantFair client without Config.SoloClaims.
func (c *Client) combines() bool {
	return c.engine.tenantFair && !c.config.SoloClaims
}

// claimCombined runs a production plan through a combined claim statement
// (TenantFairClaimCombined or its noted form, claimSQL) as a claim batch. A
// first try never waits: when another call is combining it files the
// caller's demand as a claim request, which its commit makes visible to
// the combiner, and answers busy with the request's id. The call then
// sends the statement again with that id, which waits and returns the
// outcomes a combiner served the request or, when none did, those of its
// own walk for every pending request. A request whose call fails before it
// is collected is withdrawn.
func (c *Client) claimCombined(ctx context.Context, p claimpolicy.Plan, claimSQL string,
	more func(*pgx.Batch), readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	first, err := claimBatch[combinedRow](ctx, c, p, claimSQL, []any{nil}, more, readMore)
	if err != nil {
		return nil, err
	}
	request, busy := busyRequest(first)
	if !busy {
		return claimRows(first), nil
	}
	if request == nil {
		return nil, fmt.Errorf("%w: a combined claim's busy row names no request", claimpolicy.ErrMalformedRow)
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "docket claim request filed",
		slog.Int64("request", *request), slog.Int("demand", int(p.Args.Demand)))
	waited, err := claimBatch[combinedRow](ctx, c, p, claimSQL, []any{*request}, more, readMore)
	if err != nil {
		c.withdrawClaimRequest(ctx, *request)
		return nil, err
	}
	if _, busy := busyRequest(waited); busy {
		return nil, fmt.Errorf("%w: a combined claim call with request %d answered busy", claimpolicy.ErrMalformedRow, *request)
	}
	return claimRows(waited), nil
}

// busyRequest says whether rows are a first try's busy answer and returns
// the request it filed.
func busyRequest(rows []combinedRow) (*int64, bool) {
	if len(rows) == 1 && rows[0].RowKind != nil && *rows[0].RowKind == rowKindBusy {
		return rows[0].Request, true
	}
	return nil, false
}

// claimRows are the production claim rows of a combined call's answer.
func claimRows(rows []combinedRow) []claimpolicy.Row {
	out := make([]claimpolicy.Row, len(rows))
	for i, r := range rows {
		out[i] = r.Row
	}
	return out
}

// withdrawClaimRequest deletes a request its call no longer waits for, if
// no combiner served it yet, on a context of its own: the call's may be
// what ended it. A failed withdrawal is logged; the request then expires
// unserved or, if a combiner serves it first, its leases expire after their
// claim TTL.
func (c *Client) withdrawClaimRequest(ctx context.Context, request int64) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), withdrawTimeout)
	defer cancel()
	if err := c.queries.WithdrawClaimRequest(wctx, request); err != nil {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "docket claim request not withdrawn",
			slog.Int64("request", request), slog.String("error", err.Error()))
	}
}

package docket

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// rowKindBusy is the one row a combined call's first try returns when it
// waited for combiners longer than the lock wait: it leased nothing itself,
// and names the ticket under which a combiner may still have served it.
const rowKindBusy = "busy"

// combinedRow is a row of a combined claim statement: a production claim
// row, then the ticket a busy row names.
type combinedRow struct {
	claimpolicy.Row
	Ticket *int64
}

// combines says whether this client's production claims go through the
// combined claim function: a TenantFair client without Config.SoloClaims.
func (c *Client) combines() bool {
	return c.engine.tenantFair && !c.config.SoloClaims
}

// claimCombined runs a production plan through a combined claim statement
// (TenantFairClaimCombined or its noted form, claimSQL) as a claim batch. A
// call that finds another combining announces its demand and waits for
// that combiner within the statement, which returns what it was served or
// what its own walk leased. Only a first try that waited longer than the
// lock wait answers busy with its ticket: a combiner may still serve it,
// so the call sends the statement again with the ticket, which collects
// that delivery or waits once more and answers lock_contention when that
// wait runs out too.
func (c *Client) claimCombined(ctx context.Context, p claimpolicy.Plan, claimSQL string,
	more func(*pgx.Batch), readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	first, err := claimBatch[combinedRow](ctx, c, p, claimSQL, []any{nil}, more, readMore)
	if err != nil {
		return nil, err
	}
	ticket, busy := busyTicket(first)
	if !busy {
		return claimRows(first), nil
	}
	if ticket == nil {
		return nil, fmt.Errorf("%w: a combined claim's busy row names no ticket", claimpolicy.ErrMalformedRow)
	}
	c.logger.LogAttrs(ctx, slog.LevelDebug, "docket claim wait ran out, collecting",
		slog.Int64("ticket", *ticket), slog.Int("demand", int(p.Args.Demand)))
	again, err := claimBatch[combinedRow](ctx, c, p, claimSQL, []any{*ticket}, more, readMore)
	if err != nil {
		return nil, err
	}
	if _, busy := busyTicket(again); busy {
		return nil, fmt.Errorf("%w: a combined claim call with ticket %d answered busy", claimpolicy.ErrMalformedRow, *ticket)
	}
	return claimRows(again), nil
}

// busyTicket says whether rows are a first try's busy answer and returns
// the ticket it names.
func busyTicket(rows []combinedRow) (*int64, bool) {
	if len(rows) == 1 && rows[0].RowKind != nil && *rows[0].RowKind == rowKindBusy {
		return rows[0].Ticket, true
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

package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// RemoveSchedule deletes a schedule, so it inserts nothing more; the runs it
// inserted stay. A missing schedule is ErrNotFound; a version mismatch
// (ExpectedVersion) is a *StaleVersionError (ErrStale) and deletes nothing.
// A tick being taken when it is called is committed first.
func (c *store) RemoveSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) error {
	return timedErr(ctx, c.telemetry, opRemoveSchedule, func() error {
		_, err := c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if _, err := q.DeleteSchedule(ctx, row.ID); err != nil {
				return row, fmt.Errorf("delete: %w", err)
			}
			return row, nil
		})
		return err
	})
}

package testkit

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// AwaitActivity blocks in one server-side statement until condition, a
// boolean SQL expression over the server's activity and lock views, holds,
// or fails after within. A lock wait of a product statement sends no signal
// a test could receive, so the server itself watches for it; each round
// drops the cached activity snapshot, so it sees the current sessions.
func AwaitActivity(ctx context.Context, pool *pgxpool.Pool, condition string, within time.Duration) error {
	_, err := pool.Exec(ctx, fmt.Sprintf(`do $await$
		declare
			v_deadline timestamptz := clock_timestamp() + interval '%d milliseconds';
		begin
			loop
				perform pg_stat_clear_snapshot();
				exit when %s;
				if clock_timestamp() > v_deadline then
					raise exception 'the awaited session activity did not appear within %d ms';
				end if;
				perform pg_sleep(0.001);
			end loop;
		end
		$await$`, within.Milliseconds(), condition, within.Milliseconds()))
	if err != nil {
		return fmt.Errorf("await session activity: %w", err)
	}
	return nil
}

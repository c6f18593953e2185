package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// CombinedWaiterCondition is the condition, on pg_locks, of a combined
// claim call waiting for a combiner: the session holds a marker (an advisory lock of
// two keys, its kind and its ticket with its demand, in share mode; a
// combiner's served locks have two keys too but are exclusive) and waits
// for the combiner's advisory lock in share mode.
const CombinedWaiterCondition = `exists (select ` + combinedWaiterLocks + `)`

// combinedWaiterLocks joins, in pool's database, the lock a combined claim
// call waits for (the combiner's, in share mode) to the marker the same
// session holds; w.pid is the waiting session.
const combinedWaiterLocks = `from pg_locks w join pg_locks m on m.pid = w.pid
	 where w.locktype = 'advisory' and not w.granted and w.mode = 'ShareLock' and w.objsubid = 1
	   and m.locktype = 'advisory' and m.granted and m.objsubid = 2 and m.mode = 'ShareLock'
	   and w.database = (select d.oid from pg_database d where d.datname = current_database())`

// CombinedWaiterPIDs lists the backends of pool's database that wait for a
// combiner in a combined claim call now, as CombinedWaiterCondition finds
// them.
func CombinedWaiterPIDs(ctx context.Context, pool *pgxpool.Pool) ([]int32, error) {
	rows, err := pool.Query(ctx, `select distinct w.pid `+combinedWaiterLocks)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int32])
}

// AwaitCombinedWaiter returns once some session of pool's database waits
// for a combiner in a combined claim call with its demand announced.
func AwaitCombinedWaiter(ctx context.Context, pool *pgxpool.Pool) error {
	return AwaitActivity(ctx, pool, CombinedWaiterCondition, WorkerDeadline)
}

// CombinedMarkers counts the markers held in pool's database: the
// combined claim calls waiting for a combiner now.
func CombinedMarkers(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	return QueryInt64(t, pool, `select count(*) from pg_locks l
		 where l.locktype = 'advisory' and l.granted and l.objsubid = 2 and l.mode = 'ShareLock'
		   and l.database = (select d.oid from pg_database d where d.datname = current_database())`)
}

// EndBackend cancels the statement the backend pid runs, if any, and
// returns once that backend runs none. A call whose context ended has
// returned to its caller but goes on running on the server until pgx's
// cancel request reaches it; a test that goes on with the domain waits for
// this first, so nothing of the call outlives it. The wait may run on the
// very connection the call gave back to the pool, whose backend then runs
// the wait itself: its statement has ended too.
func EndBackend(ctx context.Context, pool *pgxpool.Pool, pid int32) error {
	if _, err := pool.Exec(ctx, `select pg_cancel_backend($1)`, pid); err != nil {
		return fmt.Errorf("cancel backend %d: %w", pid, err)
	}
	return AwaitActivity(ctx, pool, fmt.Sprintf(`not exists (select from pg_stat_activity a
		 where a.pid = %d and a.pid <> pg_backend_pid() and a.state = 'active')`, pid), WorkerDeadline)
}

package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// deadlineHandlers are the two context watcher handlers compared: pgx's
// default, which closes the connection when the context ends, and the
// recommended one, which cancels the server statement first.
var deadlineHandlers = []struct {
	name      string
	configure func(*pgxpool.Config)
}{
	{"close_connection", nil},
	{"cancel_request", cancelOnDone},
}

// BenchmarkInsertRunsDeadline measures, per handler, how long InsertRuns
// takes to return once its deadline passed while its statement waited on a
// lock (reported as ns/return; ns/op includes setting up the block and
// clearing it). Outside the measured span the blocker rolls back and the
// runs are deleted.
func BenchmarkInsertRunsDeadline(b *testing.B) {
	for _, h := range deadlineHandlers {
		b.Run(h.name, func(b *testing.B) {
			env := newHardDeadlineEnv(b, h.configure)
			ctx := context.Background()
			var returned time.Duration
			for b.Loop() {
				blocker, took, _ := env.blockedInsert(b, true)
				returned += took
				if err := blocker.Rollback(ctx); err != nil {
					b.Fatalf("rollback blocker: %v", err)
				}
				env.waitVictimStatement(b)
				if _, err := env.pool.Exec(ctx, `delete from docket_runs where run_id like 'dl-%'`); err != nil {
					b.Fatalf("clear: %v", err)
				}
			}
			b.ReportMetric(float64(returned.Nanoseconds())/float64(b.N), "ns/return")
		})
	}
}

// BenchmarkInsertRunsHandler measures an InsertRuns of three runs under a
// live deadline that never passes, per handler: what the recommended
// handler costs a call that is not cancelled.
func BenchmarkInsertRunsHandler(b *testing.B) {
	for _, h := range deadlineHandlers {
		b.Run(h.name, func(b *testing.B) {
			env := newHardDeadlineEnv(b, h.configure)
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				b.StopTimer()
				if _, err := env.pool.Exec(ctx, `delete from docket_runs where run_id like 'dl-%'`); err != nil {
					b.Fatalf("clear: %v", err)
				}
				b.StartTimer()
				if _, err := env.victim.InsertRuns(ctx, deadlineRuns()); err != nil {
					b.Fatalf("insert: %v", err)
				}
				cancel()
			}
		})
	}
}

package testkit

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// ScheduleAdd adds s and fails the test on error.
func ScheduleAdd(t *testing.T, client *docket.Client, s docket.NewSchedule) docket.PeriodicSchedule {
	t.Helper()
	added, err := client.AddSchedule(Context(t), s)
	if err != nil {
		t.Fatalf("add schedule %q: %v", s.Name, err)
	}
	return added
}

// ScheduleRunIDs are the run ids of the tick runs in the database, sorted.
func ScheduleRunIDs(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(Context(t), `select run_id from docket_runs where run_id like 'schedule:%' order by run_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// ScheduleFetch reads a schedule and fails the test on error.
func ScheduleFetch(t *testing.T, client *docket.Client, scope docket.Scope, name string) docket.PeriodicSchedule {
	t.Helper()
	s, err := client.FetchSchedule(Context(t), scope, name)
	if err != nil {
		t.Fatalf("fetch schedule %q: %v", name, err)
	}
	return s
}

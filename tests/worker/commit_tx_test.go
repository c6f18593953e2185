package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A handler writes its verdict with Job.CommitTx in the transaction of its
// own writes: when that transaction commits, the run is settled with that
// verdict exactly once (the Result it returns is ignored); when it rolls
// back, the Worker writes the returned Result, fenced on the same claim.
func TestWorkerHandlerCommitsInItsOwnTransaction(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.ExecSQL(t, pool, `create table sent (run_id text primary key)`)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "commits")
	rs.Insert("t", "rolls-back")
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	var secondCall error
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `insert into sent values ($1)`, job.RunID); err != nil {
					return err
				}
				if err := job.CommitTx(ctx, tx, docket.Complete(json.RawMessage(`{"sent": true}`))); err != nil {
					return err
				}
				if job.RunID == "commits" {
					secondCall = job.CommitTx(ctx, tx, docket.Complete(nil))
					return nil
				}
				return errors.New("the app gives up: roll back")
			})
			if err != nil {
				return docket.RetryAfter(time.Hour)
			}
			return docket.Fail(errors.New("ignored: the transaction committed"))
		}})
	events.WaitVerdicts(t, map[string]string{"commits": "complete", "rolls-back": "retry"})
	testkit.StopWorker(t, w, runResult)
	if !errors.Is(secondCall, docket.ErrInvalidArgument) {
		t.Fatalf("a second CommitTx: %v, want ErrInvalidArgument", secondCall)
	}
	commits, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), "commits")
	if err != nil || commits.Status != docket.StatusDone || string(commits.State) != `{"sent": true}` || commits.CheckpointSeq != 1 {
		t.Fatalf("commits: %+v, %v; want done with the transaction's verdict at seq 1", commits, err)
	}
	back, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), "rolls-back")
	if err != nil || back.Status != docket.StatusRunning || back.LatestCheckpointType != "retry" || back.CheckpointSeq != 1 ||
		string(back.State) == `{"sent": true}` || counter.Get("rolls-back") != 1 {
		t.Fatalf("rolls-back: %+v, %v after %d calls; want the returned retry written once at seq 1", back, err, counter.Get("rolls-back"))
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from sent where run_id = 'rolls-back'`); got != 0 {
		t.Fatalf("the rolled-back write landed: %d rows", got)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from sent where run_id = 'commits'`); got != 1 {
		t.Fatalf("commits' own write: %d rows", got)
	}
	if got := testkit.WorkerCountEvents(events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventVerdict && ev.RunID == "commits"
	}); got != 1 || counter.Get("commits") != 1 {
		t.Fatalf("commits: %d verdict events, %d handler calls; want exactly one of each", got, counter.Get("commits"))
	}
}

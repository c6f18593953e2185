package worker

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/faultproxy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A Worker acknowledges only its own verdict. Worker A reaches the server
// through a proxy that cuts it off while its handler runs, so its Fail
// verdict's write fails without an answer and its retry waits on a held
// connection; A's claim expires, Worker B (direct, the same ClaimTTL) takes
// the run and commits the same Fail; then the proxy forwards again. A
// never reports that verdict as written: it sends no write once its claim
// may have expired, and a commit another claim made never counts as its
// own. The run's latest commit is B's.
func TestWorkerNeverAcknowledgesAnotherHoldersVerdict(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	direct, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(direct.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	viaProxy := *direct
	viaProxy.Host = proxy.Addr()

	poolB := testkit.PoolFor(t, databaseURL)
	clientA := testkit.OpenClient(t, testkit.PoolFor(t, viaProxy.String()), testkit.TenantFairConfig(4))
	clientB := testkit.OpenClient(t, poolB, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	if _, err := clientB.InsertRun(ctx, docket.NewRun{RunID: "r1", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h1",
		State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}

	const ttl = 2 * time.Second
	boom := errors.New("boom")
	startedA, releaseA := make(chan struct{}, 1), make(chan struct{})
	eventsA, eventsB := testkit.NewWorkerEvents(), testkit.NewWorkerEvents()
	testkit.StartWorker(t, clientA, docket.WorkerConfig{Concurrency: 1, ClaimTTL: ttl, OnEvent: eventsA.Hook,
		Retry: docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			startedA <- struct{}{}
			<-releaseA
			return docket.Fail(boom)
		}})
	select {
	case <-startedA:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("Worker A never started the handler")
	}
	var tokenA string
	if err := poolB.QueryRow(ctx, `select claim_token::text from docket_runs where run_id = 'r1'`).Scan(&tokenA); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	close(releaseA)

	testkit.StartWorker(t, clientB, docket.WorkerConfig{Concurrency: 1, ClaimTTL: ttl, OnEvent: eventsB.Hook,
		Retry:   docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result { return docket.Fail(boom) }})
	eventsB.WaitWritten(t, "fail", "r1")
	proxy.Open()

	verdictOfA := func(events []docket.WorkerEvent) []docket.WorkerEvent {
		var out []docket.WorkerEvent
		for _, e := range testkit.WorkerEventsOf(events, docket.EventVerdict) {
			if e.RunID == "r1" {
				out = append(out, e)
			}
		}
		return out
	}
	eventsA.WaitFor(t, "Worker A's verdict to end", func(events []docket.WorkerEvent) bool { return len(verdictOfA(events)) > 0 })
	for _, e := range verdictOfA(eventsA.All()) {
		if e.Outcome == docket.VerdictWritten {
			t.Fatalf("Worker A acknowledged a verdict it never wrote: %+v", e)
		}
	}
	var status, lastCommit string
	if err := poolB.QueryRow(ctx, `select status, coalesce(last_commit_token::text, '') from docket_runs where run_id = 'r1'`).Scan(&status, &lastCommit); err != nil {
		t.Fatal(err)
	}
	if status != "failed" || lastCommit == "" || lastCommit == tokenA {
		t.Fatalf("run r1: status %s, latest commit by claim %q (A's claim %s); want failed by B's claim", status, lastCommit, tokenA)
	}
}

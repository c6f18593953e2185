package worker

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// queueProbe is one queue's handler: it reports each run it starts and
// holds it until its gate opens.
type queueProbe struct {
	started chan string
	gate    chan struct{}
}

func newQueueProbe() *queueProbe {
	return &queueProbe{started: make(chan string, 8), gate: make(chan struct{})}
}

func (p *queueProbe) handle(ctx context.Context, job *docket.Job) docket.Result {
	p.started <- job.RunID
	select {
	case <-p.gate:
		return docket.Complete(nil)
	case <-ctx.Done():
		return docket.Fail(context.Cause(ctx))
	}
}

// await receives n started run ids.
func (p *queueProbe) await(t *testing.T, queue string, n int) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for len(seen) < n {
		select {
		case id := <-p.started:
			seen[id] = true
		case <-time.After(testkit.WorkerDeadline):
			t.Fatalf("queue %s started only %v, want %d runs", queue, seen, n)
		}
	}
	return seen
}

// Two queues (domains) in one database, served by one process through
// docket.Queues on one pool: the same run ids in both never cross, each
// queue keeps its own cap, concurrency, ring and cursor, and one Stop
// drains both.
func TestWorkerQueuesKeepDomainsApart(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.PoolFor(t, pgtest.NewEmptyDatabase(t))
	for _, schema := range []string{"email", "reports"} {
		if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: schema}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if domains, err := docket.ListDomains(ctx, pool); err != nil || len(domains) != 2 || domains[0] != "email" || domains[1] != "reports" {
		t.Fatalf("ListDomains = %q, %v", domains, err)
	}
	open := func(schema string, defaultCap int) *docket.Client {
		cfg := testkit.TenantFairConfig(defaultCap)
		cfg.Schema = schema
		return testkit.OpenClient(t, pool, cfg)
	}
	email, reports := open("email", 1), open("reports", 3)
	insert := func(client *docket.Client, tenant string, ids ...string) {
		for _, id := range ids {
			if _, err := client.InsertRun(ctx, docket.NewRun{RunID: id, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h",
				State: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	insert(email, "acme", "a", "b")
	insert(email, "globex", "c")
	insert(reports, "acme", "a", "b", "c")

	emailProbe, reportsProbe := newQueueProbe(), newQueueProbe()
	emailWorker, err := docket.NewWorker(email, docket.WorkerConfig{Concurrency: 2, Handler: emailProbe.handle})
	if err != nil {
		t.Fatal(err)
	}
	reportsWorker, err := docket.NewWorker(reports, docket.WorkerConfig{Concurrency: 3, Handler: reportsProbe.handle})
	if err != nil {
		t.Fatal(err)
	}
	queues, err := docket.NewQueues(emailWorker, reportsWorker)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- queues.Run(context.WithoutCancel(ctx)) }()

	// email's cap of 1 admits one of acme's runs and globex's; reports' cap
	// of 3 and concurrency of 3 run all of acme's at once.
	if got := reportsProbe.await(t, "reports", 3); !maps.Equal(got, map[string]bool{"a": true, "b": true, "c": true}) {
		t.Fatalf("reports started %v", got)
	}
	emailStarted := emailProbe.await(t, "email", 2)
	if !emailStarted["c"] || len(emailStarted) != 2 {
		t.Fatalf("email started %v, want globex's c and one of acme's", emailStarted)
	}
	for _, q := range []struct {
		client   *docket.Client
		admitted int64
		cap      int
	}{{email, 1, 1}, {reports, 3, 3}} {
		cp, err := q.client.InspectClaimPolicy(ctx, docket.Tenant("acme"))
		if err != nil || cp.Admitted != q.admitted || cp.EffectiveMaxActiveRuns != q.cap {
			t.Fatalf("acme's policy: %+v, %v; want %d admitted of %d", cp, err, q.admitted, q.cap)
		}
	}
	for _, q := range []struct {
		name     string
		client   *docket.Client
		ringSize int64
	}{{"email", email, 2}, {"reports", reports, 1}} {
		admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired, Schema: q.name})
		if err != nil {
			t.Fatal(err)
		}
		overview, err := admin.DomainOverview(ctx)
		if err != nil || overview.RingSize != q.ringSize {
			t.Fatalf("%s's overview: %+v, %v; want a ring of %d", q.name, overview, err, q.ringSize)
		}
	}

	// email's held runs finish and its last acme run follows; then one Stop
	// drains reports' three held runs, which finish as their gate opens.
	close(emailProbe.gate)
	emailProbe.await(t, "email", 1)
	stopped := make(chan error, 1)
	go func() { stopped <- queues.Stop(ctx) }()
	close(reportsProbe.gate)
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	for _, q := range []struct {
		name   string
		client *docket.Client
		runs   map[string]string
	}{{"email", email, map[string]string{"a": "acme", "b": "acme", "c": "globex"}}, {"reports", reports, map[string]string{"a": "acme", "b": "acme", "c": "acme"}}} {
		for id, tenant := range q.runs {
			run, err := q.client.FetchRun(ctx, docket.Tenant(tenant), id)
			if err != nil || run.Status != docket.StatusDone {
				t.Fatalf("%s's run %s: %+v, %v", q.name, id, run, err)
			}
		}
	}
	// A claim in one queue moves that queue's cursor alone.
	cursor := func(schema string) int64 {
		admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		overview, err := admin.DomainOverview(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return overview.Cursor
	}
	emailBefore, reportsBefore := cursor("email"), cursor("reports")
	insert(email, "initech", "d")
	res, err := email.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "d" {
		t.Fatalf("email's claim: %+v, %v", res, err)
	}
	if after := cursor("email"); after == emailBefore {
		t.Fatalf("email's cursor stayed at %d after a grant", after)
	}
	if after := cursor("reports"); after != reportsBefore {
		t.Fatalf("reports' cursor moved from %d to %d on email's claim", reportsBefore, after)
	}
	select {
	case id := <-emailProbe.started:
		t.Fatalf("email started %q once more", id)
	case id := <-reportsProbe.started:
		t.Fatalf("reports started %q once more", id)
	default:
	}
}

// NewQueues refuses no worker, a nil one and one given twice.
func TestWorkerQueuesRefuseBadWorkers(t *testing.T) {
	t.Parallel()
	client := testkit.OpenClient(t, testkit.NewPool(t), testkit.TenantFairConfig(1))
	w, err := docket.NewWorker(client, docket.WorkerConfig{Concurrency: 1,
		Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		workers []*docket.Worker
		want    string
	}{
		{nil, "docket: invalid config: queues: no worker"},
		{[]*docket.Worker{w, nil}, "docket: invalid config: queues: worker at index 1 is nil"},
		{[]*docket.Worker{w, w}, "docket: invalid config: queues: worker at index 1 is given twice"},
	} {
		if _, err := docket.NewQueues(c.workers...); !errors.Is(err, docket.ErrInvalidConfig) || err.Error() != c.want {
			t.Errorf("NewQueues(%d workers) = %v, want %q", len(c.workers), err, c.want)
		}
	}
}

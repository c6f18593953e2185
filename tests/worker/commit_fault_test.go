package worker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// errHardAnswerLost is what a connection whose answer was dropped reports.
var errHardAnswerLost = errors.New("connection lost before the answer arrived")

// lostAnswerConn is a client connection that, once armed, passes the
// server's answer to the next executed statement through up to its
// ReadyForQuery, which the server sends only after the statement's implicit
// transaction committed, then drops it and closes: the statement is
// committed and the client never learns that it was.
type lostAnswerConn struct {
	net.Conn
	armed atomic.Bool
	// The fields below belong to the goroutine that reads the connection.
	held     []byte // an incomplete message header, held back
	skip     int    // body bytes of the current message still to pass
	complete bool   // a CommandComplete passed since arming
	lost     bool   // the answer was dropped and the connection closed
}

// Read passes data through until armed; then it passes the answer up to
// the ReadyForQuery that follows a CommandComplete (a prepare round trip
// ends in ReadyForQuery without one) and fails from there on.
func (c *lostAnswerConn) Read(p []byte) (int, error) {
	if !c.armed.Load() {
		return c.Conn.Read(p)
	}
	for !c.lost {
		buf := make([]byte, len(p)-len(c.held))
		n, err := c.Conn.Read(buf)
		pass, lost := c.split(append(c.held, buf[:n]...))
		if lost {
			c.lost = true
			_ = c.Conn.Close()
		}
		if len(pass) > 0 {
			return copy(p, pass), nil
		}
		if err != nil && !lost {
			return 0, err
		}
	}
	return 0, errHardAnswerLost
}

// split walks the backend messages in data and returns the bytes to pass
// on, holding back an incomplete header, and whether the committed answer's
// ReadyForQuery was reached (it and everything after it are dropped).
func (c *lostAnswerConn) split(data []byte) (pass []byte, lost bool) {
	c.held = nil
	for i := 0; i < len(data); {
		if c.skip > 0 {
			n := min(c.skip, len(data)-i)
			c.skip, i = c.skip-n, i+n
			continue
		}
		if len(data)-i < 5 {
			c.held = append([]byte(nil), data[i:]...)
			return data[:i], false
		}
		switch data[i] {
		case 'Z':
			if c.complete {
				return data[:i], true
			}
		case 'C':
			c.complete = true
		}
		c.skip = int(binary.BigEndian.Uint32(data[i+1:i+5])) - 4
		i += 5
	}
	return data, false
}

// answerDropper arms the connection that sends the first statement
// whose text is sql, once: that statement commits and its answer is lost.
// It also counts the Worker's checks of whether a commit was applied.
type answerDropper struct {
	sql  string
	once sync.Once
	// armed is closed when a connection was armed.
	armed chan struct{}
	// checks counts CommitApplied statements.
	checks atomic.Int64
}

// TraceQueryStart arms conn's connection when the statement is sql.
func (d *answerDropper) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if data.SQL == dbgen.CommitApplied {
		d.checks.Add(1)
	}
	if data.SQL != d.sql {
		return ctx
	}
	d.once.Do(func() {
		if lost, ok := conn.PgConn().Conn().(*lostAnswerConn); ok {
			lost.armed.Store(true)
			close(d.armed)
		}
	})
	return ctx
}

// TraceQueryEnd does nothing.
func (d *answerDropper) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// lostAnswerPool is a pool whose connections can lose an answer: the
// first statement whose text is sql commits and its connection dies before
// the answer arrives.
func lostAnswerPool(t *testing.T, databaseURL, sql string) (*pgxpool.Pool, *answerDropper) {
	t.Helper()
	cfg := testkit.PoolConfig(t, databaseURL, 8)
	// The dropper reads the protocol, so the connection must be plain.
	cfg.ConnConfig.TLSConfig, cfg.ConnConfig.Fallbacks = nil, nil
	var dialer net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lostAnswerConn{Conn: conn}, nil
	}
	dropper := &answerDropper{sql: sql, armed: make(chan struct{})}
	cfg.ConnConfig.Tracer = dropper
	return testkit.Pool(t, cfg), dropper
}

// lostCommitEnv is a TenantFair domain with one due run, a client on a
// pool that loses the answer of the Worker's first batch commit, and a
// worker logging to log.
type lostCommitEnv struct {
	pool    *pgxpool.Pool
	client  *docket.Client
	reader  *sdkmetric.ManualReader
	dropper *answerDropper
	log     *testkit.WorkerLogRecorder
	calls   *testkit.WorkerCounter
	events  *testkit.WorkerEvents
}

// newHardLostCommitEnv inserts run and starts a worker whose handler calls
// before and then completes the run with {"done": true}.
func newHardLostCommitEnv(t *testing.T, run string, before func(ctx context.Context, env *lostCommitEnv)) (*lostCommitEnv, func()) {
	t.Helper()
	pool, dropper := lostAnswerPool(t, pgtest.NewDatabase(t), dbgen.CommitRuns)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(2)
	cfg.MeterProvider = provider
	env := &lostCommitEnv{pool: pool, client: testkit.OpenClient(t, pool, cfg), reader: reader, dropper: dropper,
		log: &testkit.WorkerLogRecorder{}, calls: testkit.NewWorkerCounter(), events: testkit.NewWorkerEvents()}
	if _, err := env.client.InsertRun(testkit.Context(t), docket.NewRun{RunID: run, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1",
		State: json.RawMessage(`{"n":0}`)}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	w, runResult := testkit.StartWorker(t, env.client, docket.WorkerConfig{
		Concurrency: 1, Logger: slog.New(env.log), OnEvent: env.events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			env.calls.Add(job.RunID)
			if before != nil {
				before(ctx, env)
			}
			return docket.Complete(json.RawMessage(`{"done":true}`))
		},
	})
	return env, func() { testkit.StopWorker(t, w, runResult) }
}

// expectRun requires the run's status, latest checkpoint type, document
// and checkpoint sequence.
func (env *lostCommitEnv) expectRun(t *testing.T, runID, status, checkpoint, state string, seq int64) {
	t.Helper()
	run, err := env.client.FetchRun(testkit.Context(t), docket.Tenant("t"), runID)
	if err != nil {
		t.Fatalf("fetch %s: %v", runID, err)
	}
	if string(run.Status) != status || run.LatestCheckpointType != checkpoint || string(run.State) != state || run.CheckpointSeq != seq || run.Claimed() {
		t.Fatalf("%s: %+v, want unclaimed %s, %s, %s at checkpoint %d", runID, run, status, checkpoint, state, seq)
	}
}

// The worker's log lines for a verdict commit that met its fence.
const (
	alreadyApplied = "docket worker run settled; its commit was already applied"
	fenceRefusal   = "docket worker commit refused by the claim fence; a newer holder owns the run"
)

// TestWorkerCommitAnswerLost loses the answer of a Worker's verdict
// commit after the server committed it: the worker's retry meets its own
// fence, finds its verdict committed, and logs and counts the run as settled,
// not as fenced out by a newer holder.
func TestWorkerCommitAnswerLost(t *testing.T) {
	t.Parallel()
	env, stop := newHardLostCommitEnv(t, "lost", nil)
	waitClosed(t, "the verdict commit armed", env.dropper.armed)
	env.events.WaitWritten(t, "complete", "lost")
	stop()

	env.expectRun(t, "lost", "done", "complete", `{"done": true}`, 1)
	if n := env.dropper.checks.Load(); n != 1 {
		t.Errorf("%d checks of the applied commit, want 1", n)
	}
	env.calls.ExpectEach(t, []string{"lost"}, 1)
	settled := env.log.Find(alreadyApplied)
	if len(settled) != 1 || settled[0].Level != slog.LevelDebug || settled[0].Attrs["run_id"] != "lost" || settled[0].Attrs["result"] != "complete" {
		t.Errorf("settled records %+v, want one debug record for run lost, result complete", settled)
	}
	if refused := env.log.Find(fenceRefusal); len(refused) != 0 {
		t.Errorf("refusal records %+v, want none", refused)
	}
	testkit.WorkerExpectQuiet(t, env.log)
	got := testkit.TelemetryCollect(t, testkit.Context(t), env.reader)
	got.ExpectPoints(t, "docket.worker.fenced_commits", testkit.TelemetryPoints{testkit.TelemetryAttrs("reason", "already_applied"): 1})
	// The lost answer carried the statement's report of the marker it
	// cleared, and the retry was a stale commit: no release is counted.
	got.ExpectPoints(t, "docket.admission.releases", nil)
	if points := testkit.WorkerTelemetryPoints(got, "docket.store.duration", "operation=commit,"); points[testkit.TelemetryAttrs("operation", "commit", "result", "stale")] != 1 {
		t.Errorf("commit store calls %v, want one stale retry", testkit.SortedPoints(points))
	}
}

// TestWorkerCommitAnswerLostToNewerHolder loses the answer of a
// Worker's verdict commit that matched no row, because a newer holder took
// the claim and committed its own verdict first: the worker's retry meets
// the fence, the row shows the other verdict, and the old refusal is logged
// and counted.
func TestWorkerCommitAnswerLostToNewerHolder(t *testing.T) {
	t.Parallel()
	env, stop := newHardLostCommitEnv(t, "stolen", func(ctx context.Context, env *lostCommitEnv) {
		// The newer holder: a claim an hour on steals the worker's claim,
		// and its commit finishes the run with another verdict.
		res, err := env.client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Hour), Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 10})
		if err != nil || len(res.Leases) != 1 {
			t.Errorf("steal: %+v, %v", res, err)
			return
		}
		lease := res.Leases[0]
		if _, err := env.client.Commit(ctx, docket.CommitRequest{Holder: lease.Holder(), ExpectedSeq: lease.CheckpointSeq,
			State: json.RawMessage(`{"by":"newer"}`), CheckpointType: "newer", Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
			t.Errorf("newer holder's commit: %v", err)
		}
	})
	waitClosed(t, "the verdict commit armed", env.dropper.armed)
	env.events.WaitFor(t, "the verdict refused", testkit.WorkerFenced("stolen", "complete"))
	stop()

	env.expectRun(t, "stolen", "done", "newer", `{"by": "newer"}`, 1)
	if n := env.dropper.checks.Load(); n != 1 {
		t.Errorf("%d checks of the applied commit, want 1", n)
	}
	if refused := env.log.Find(fenceRefusal); len(refused) != 1 || refused[0].Level != slog.LevelInfo || refused[0].Attrs["result"] != "complete" {
		t.Errorf("refusal records %+v, want one at info level, result complete", refused)
	}
	if settled := env.log.Find(alreadyApplied); len(settled) != 0 {
		t.Errorf("settled records %+v, want none", settled)
	}
	testkit.WorkerExpectQuiet(t, env.log)
	got := testkit.TelemetryCollect(t, testkit.Context(t), env.reader)
	got.ExpectPoints(t, "docket.worker.fenced_commits", testkit.TelemetryPoints{testkit.TelemetryAttrs("reason", "newer_holder"): 1})
}

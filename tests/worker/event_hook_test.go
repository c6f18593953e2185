package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestWorkerReportsEachEventToOnEvent requires, per run, exactly the events
// of what the worker did with it: a verdict written, one refused as invalid
// and replaced by the failure, and one dropped because a stopping worker had
// handed its claim back first.
func TestWorkerReportsEachEventToOnEvent(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 3, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch job.RunID {
			case "invalid":
				return docket.Complete(json.RawMessage(`{not json`))
			case "slow":
				<-ctx.Done()
			}
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "the worker to listen", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventListening }) == 1
	})
	if _, err := client.InsertRuns(testkit.Context(t), []docket.NewRun{
		{RunID: "done", Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)},
		{RunID: "invalid", Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)},
		{RunID: "slow", Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)},
	}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	events.WaitFor(t, "done and invalid settled, slow started", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerWritten(evs, "done", "complete") && testkit.WorkerWritten(evs, "invalid", "invalid_result") &&
			testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
				return ev.Kind == docket.EventHandlerStarted && ev.RunID == "slow"
			}) == 1
	})
	// A stop whose drain window is over hands slow back at once; its
	// handler then returns a verdict the worker drops.
	stopCtx, endDrain := context.WithCancel(context.Background())
	endDrain()
	if err := w.Stop(stopCtx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}
	events.WaitFor(t, "slow's verdict dropped", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.RunID == "slow" && ev.Outcome == docket.VerdictDropped
		}) == 1
	})

	perRun := map[string][]string{}
	leases := 0
	for _, ev := range events.All() {
		switch ev.Kind {
		case docket.EventClaimed:
			if ev.Err != nil || ev.Poisoned != 0 {
				t.Errorf("claim event %+v, want no error and no poison", ev)
			}
			leases += ev.Leases
		case docket.EventHandlerStarted, docket.EventVerdict:
			if ev.Scope != docket.Tenant("t") {
				t.Errorf("event %+v, want scope t", ev)
			}
			wantErr := ev.Outcome == docket.VerdictFailed || ev.Outcome == docket.VerdictDropped
			if (ev.Err != nil) != wantErr {
				t.Errorf("event %+v: error %v, want one only for a failed or dropped verdict", ev, ev.Err)
			}
			if ev.Outcome == docket.VerdictFailed && !errors.Is(ev.Err, docket.ErrInvalidArgument) {
				t.Errorf("failed verdict %+v, want ErrInvalidArgument", ev)
			}
			what := ev.Kind.String()
			if ev.Kind == docket.EventVerdict {
				what = fmt.Sprintf("%s %s %s", ev.Kind, ev.Verdict, ev.Outcome)
			}
			perRun[ev.RunID] = append(perRun[ev.RunID], what)
		}
	}
	if leases != 3 {
		t.Errorf("claim events leased %d runs, want 3", leases)
	}
	// The hand-back and the dropped verdict of slow race each other.
	slices.Sort(perRun["slow"])
	want := map[string][]string{
		"done":    {"handler_started", "verdict complete written"},
		"invalid": {"handler_started", "verdict complete failed", "verdict invalid_result written"},
		"slow":    {"handler_started", "verdict complete dropped", "verdict stop written"},
	}
	for id, seq := range want {
		if !slices.Equal(perRun[id], seq) {
			t.Errorf("%s: events %q, want %q", id, perRun[id], seq)
		}
	}
	if len(perRun) != len(want) {
		t.Errorf("events of runs %v, want only %v", perRun, want)
	}
	if r := rs.Row("slow"); r.Status != "running" || r.Token != nil || r.Seq != 1 {
		t.Errorf("slow: %+v, want handed back at stop", r)
	}
}

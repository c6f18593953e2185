package docket

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

func TestWorkerConfigValidationAndDefaults(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	handler := func(context.Context, *Job) Result { return Complete(nil) }
	refused := map[string]struct {
		client *Client
		cfg    WorkerConfig
	}{
		"nil client":             {nil, WorkerConfig{Concurrency: 1, Handler: handler}},
		"nil handler":            {client, WorkerConfig{Concurrency: 1}},
		"zero concurrency":       {client, WorkerConfig{Handler: handler}},
		"negative poll":          {client, WorkerConfig{Concurrency: 1, Handler: handler, PollInterval: -1}},
		"negative ttl":           {client, WorkerConfig{Concurrency: 1, Handler: handler, ClaimTTL: -1}},
		"heartbeat at ttl":       {client, WorkerConfig{Concurrency: 1, Handler: handler, ClaimTTL: time.Second, HeartbeatInterval: time.Second}},
		"ttl too short to split": {client, WorkerConfig{Concurrency: 1, Handler: handler, ClaimTTL: 2}},
		"negative attempts":      {client, WorkerConfig{Concurrency: 1, Handler: handler, MaxClaimAttempts: -1}},
	}
	for name, c := range refused {
		if _, err := NewWorker(c.client, c.cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}

	w, err := NewWorker(client, WorkerConfig{Concurrency: 3, Handler: handler, ClaimTTL: 9 * time.Second})
	if err != nil {
		t.Fatalf("valid config: %v", err)
	}
	got := w.cfg
	if got.PollInterval != DefaultPollInterval || got.HeartbeatInterval != 3*time.Second ||
		got.MaxClaimAttempts != DefaultMaxClaimAttempts || got.Logger != client.logger || cap(w.slotFreed) != 3 {
		t.Fatalf("resolved config %+v", got)
	}
}

func TestResultPlans(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := now.Add(time.Hour)
	cases := map[string]struct {
		result Result
		want   commitPlan
	}{
		"complete":    {Complete([]byte(`{}`)), commitPlan{"complete", ReleaseTerminal(StatusDone), 7, []byte(`{}`)}},
		"fail":        {Fail(errors.New("x")), commitPlan{"fail", ReleaseTerminal(StatusFailed), 7, nil}},
		"retry at":    {RetryAt(at), commitPlan{"retry", ReleaseAt(at), 7, nil}},
		"retry after": {RetryAfter(time.Hour), commitPlan{"retry", ReleaseAt(at), 7, nil}},
		"continue":    {Continue(8, []byte(`1`)), commitPlan{"continue", ReleaseImmediate(), 8, []byte(`1`)}},
		"yield":       {Yield(), commitPlan{"yield", ReleaseImmediate(), 7, nil}},
		"wait":        {WaitExternal(nil), commitPlan{"wait", ReleaseExternal(), 7, nil}},
		"zero":        {Result{}, commitPlan{"no_result", ReleaseTerminal(StatusFailed), 7, nil}},
	}
	for name, c := range cases {
		got := c.result.plan(7, now)
		if got.checkpointType != c.want.checkpointType || got.schedule != c.want.schedule ||
			got.step != c.want.step || string(got.state) != string(c.want.state) {
			t.Errorf("%s: plan %+v, want %+v", name, got, c.want)
		}
	}
}

func TestErrorBackoffStaysWithinBounds(t *testing.T) {
	for failures := 1; failures <= 20; failures++ {
		ceiling := min(errorBackoffBase<<min(failures-1, 6), errorBackoffMax)
		for range 50 {
			if d := errorBackoff(failures); d < ceiling/2 || d > ceiling {
				t.Fatalf("failures %d: backoff %v outside [%v, %v]", failures, d, ceiling/2, ceiling)
			}
		}
	}
}

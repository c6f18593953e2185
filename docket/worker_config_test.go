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
	at := time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC)
	none := RetryPolicy{MaxAttempts: 1}
	policy := RetryPolicy{MaxAttempts: 3, Backoff: time.Second, MaxBackoff: time.Minute, Multiplier: 2, Random: func() float64 { return 0 }}
	failure := &AttemptFailure{Kind: ErrorKindError, Error: "x"}
	cases := map[string]struct {
		result  Result
		attempt int
		policy  RetryPolicy
		want    commitPlan
	}{
		"complete":       {Complete([]byte(`{}`)), 1, none, commitPlan{"complete", ReleaseTerminal(StatusDone), 7, []byte(`{}`), AttemptReset, nil}},
		"fail":           {Fail(errors.New("x")), 1, none, commitPlan{"fail", ReleaseTerminal(StatusFailed), 7, nil, AttemptCount, failure}},
		"fail retried":   {Fail(errors.New("x")), 2, policy, commitPlan{"backoff", releaseAfter(2 * time.Second), 7, nil, AttemptCount, failure}},
		"fail last":      {Fail(errors.New("x")), 3, policy, commitPlan{"fail", ReleaseTerminal(StatusFailed), 7, nil, AttemptCount, failure}},
		"fail now":       {FailNow(errors.New("x")), 1, policy, commitPlan{"fail", ReleaseTerminal(StatusFailed), 7, nil, AttemptCount, failure}},
		"retry at":       {RetryAt(at), 5, policy, commitPlan{"retry", ReleaseAt(at), 7, nil, AttemptCount, nil}},
		"retry after":    {RetryAfter(time.Hour), 1, none, commitPlan{"retry", releaseAfter(time.Hour), 7, nil, AttemptCount, nil}},
		"retry error":    {RetryAfterError(errors.New("x"), time.Hour), 1, none, commitPlan{"retry", releaseAfter(time.Hour), 7, nil, AttemptCount, failure}},
		"retry at error": {RetryAtError(errors.New("x"), at), 1, none, commitPlan{"retry", ReleaseAt(at), 7, nil, AttemptCount, failure}},
		"continue":       {Continue(8, []byte(`1`)), 1, none, commitPlan{"continue", ReleaseImmediate(), 8, []byte(`1`), AttemptReset, nil}},
		"yield":          {Yield(), 1, none, commitPlan{"yield", ReleaseImmediate(), 7, nil, AttemptKeep, nil}},
		"wait":           {WaitExternal(nil), 1, none, commitPlan{"wait", ReleaseExternal(), 7, nil, AttemptReset, nil}},
		"zero":           {Result{}, 1, none, commitPlan{"no_result", ReleaseTerminal(StatusFailed), 7, nil, AttemptCount, &AttemptFailure{ErrorKindNoResult, zeroResultText}}},
		"zero retried":   {Result{}, 1, policy, commitPlan{"backoff", releaseAfter(time.Second), 7, nil, AttemptCount, &AttemptFailure{ErrorKindNoResult, zeroResultText}}},
	}
	for name, c := range cases {
		got := c.result.plan(7, c.attempt, c.policy)
		if got.checkpointType != c.want.checkpointType || got.schedule != c.want.schedule ||
			got.step != c.want.step || string(got.state) != string(c.want.state) || got.attempt != c.want.attempt ||
			(got.failure == nil) != (c.want.failure == nil) || (got.failure != nil && *got.failure != *c.want.failure) {
			t.Errorf("%s: plan %+v, want %+v", name, got, c.want)
		}
	}
	if got := panicked(7, 1, policy, "boom"); got.checkpointType != "backoff" || *got.failure != (AttemptFailure{ErrorKindPanic, "boom"}) {
		t.Errorf("panic plan %+v", got)
	}
	if got := refused(7, errors.New("bad state")); got.checkpointType != "invalid_result" || got.attempt != AttemptCount ||
		*got.failure != (AttemptFailure{ErrorKindInvalidResult, "bad state"}) {
		t.Errorf("refused plan %+v", got)
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

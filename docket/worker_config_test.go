package docket

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"strings"
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
		"negative verdict wait":  {client, WorkerConfig{Concurrency: 1, Handler: handler, Tuning: WorkerTuning{VerdictBatchWait: -1}}},
		"claim ahead below none": {client, WorkerConfig{Concurrency: 1, Handler: handler, Tuning: WorkerTuning{ClaimAhead: NoClaimAhead - 1}}},
		"claim slots past int32": {client, WorkerConfig{Concurrency: 2, Handler: handler, Tuning: WorkerTuning{ClaimAhead: math.MaxInt32 - 1}}},
		// ClaimTTL 9s, HeartbeatInterval 3s: a verdict may wait less than 6s.
		"verdict wait past the claim": {client, WorkerConfig{Concurrency: 1, Handler: handler, ClaimTTL: 9 * time.Second, Tuning: WorkerTuning{VerdictBatchWait: 6 * time.Second}}},
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
	// By default it may hold up to 4 runs per handler ahead (at most 64),
	// and holds none until it has measured a claim call and a handler.
	got := w.cfg
	if got.PollInterval != DefaultPollInterval || got.HeartbeatInterval != 3*time.Second ||
		got.MaxClaimAttempts != DefaultMaxClaimAttempts || got.Logger != client.logger || cap(w.slots.freed) != 15 ||
		cap(w.slots.committing) != 15 || w.ahead.target() != 0 || w.demand(15) != 3 {
		t.Fatalf("resolved config %+v, slots %d, committing %d, ahead %d", got, cap(w.slots.freed), cap(w.slots.committing), w.ahead.target())
	}

	// Verdicts that wait for a batch free up to MaxVerdictBatch slots early.
	w, err = NewWorker(client, WorkerConfig{Concurrency: 3, Handler: handler, ClaimTTL: 9 * time.Second,
		Tuning: WorkerTuning{VerdictBatchWait: 6*time.Second - 1}})
	if err != nil {
		t.Fatalf("verdict wait just short of the claim: %v", err)
	}
	if cap(w.slots.freed) != 15 || cap(w.slots.committing) != MaxVerdictBatch {
		t.Fatalf("slots %d, committing %d; want 15 and %d", cap(w.slots.freed), cap(w.slots.committing), MaxVerdictBatch)
	}
	// A worker of more slots than that frees as many as it has.
	w, err = NewWorker(client, WorkerConfig{Concurrency: 100, Handler: handler, Tuning: WorkerTuning{VerdictBatchWait: time.Millisecond}})
	if err != nil {
		t.Fatalf("wide worker: %v", err)
	}
	if cap(w.slots.committing) != 164 {
		t.Fatalf("committing %d, want 164", cap(w.slots.committing))
	}
	// NoClaimAhead holds none.
	w, err = NewWorker(client, WorkerConfig{Concurrency: 2, Handler: handler, Tuning: WorkerTuning{ClaimAhead: NoClaimAhead}})
	if err != nil {
		t.Fatalf("no claim ahead: %v", err)
	}
	if cap(w.slots.freed) != 2 || w.demand(2) != 2 {
		t.Fatalf("claim slots %d, demand %d; want 2 and 2", cap(w.slots.freed), w.demand(2))
	}
	// Runs held ahead take claim slots, not handler slots.
	w, err = NewWorker(client, WorkerConfig{Concurrency: 2, Tuning: WorkerTuning{ClaimAhead: 3}, Handler: handler})
	if err != nil {
		t.Fatalf("claim ahead: %v", err)
	}
	if cap(w.slots.freed) != 5 || cap(w.slots.committing) != 5 || cap(w.slots.exec.Handlers) != 2 {
		t.Fatalf("claim slots %d, committing %d, handler slots %d; want 5, 5 and 2",
			cap(w.slots.freed), cap(w.slots.committing), cap(w.slots.exec.Handlers))
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
		"complete":       {Complete([]byte(`{}`)), 1, none, commitPlan{"complete", ReleaseTerminal(StatusDone), 7, []byte(`{}`), AttemptCount, nil}},
		"snooze":         {Snooze(time.Minute), 3, policy, commitPlan{"snooze", releaseAfter(time.Minute), 7, nil, AttemptKeep, nil}},
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
	timeout := &HandlerTimeoutError{Timeout: time.Minute}
	if got := timedOut(7, 1, policy, timeout); got.checkpointType != "backoff" || got.schedule != releaseAfter(time.Second) ||
		*got.failure != (AttemptFailure{ErrorKindError, "docket: handler timed out after 1m0s"}) {
		t.Errorf("timeout plan %+v", got)
	}
	if got := timedOut(7, 3, policy, timeout); got.checkpointType != "timeout" || got.schedule != ReleaseTerminal(StatusFailed) {
		t.Errorf("last attempt's timeout plan %+v", got)
	}
	if !errors.Is(timeout, ErrHandlerTimeout) || !errors.Is(timeout, context.DeadlineExceeded) {
		t.Errorf("%v matches neither ErrHandlerTimeout nor context.DeadlineExceeded", timeout)
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

func TestWorkerRetentionValidation(t *testing.T) {
	client := &Client{store: &store{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	handler := func(context.Context, *Job) Result { return Complete(nil) }
	refused := map[string]WorkerRetention{
		"negative every":       {Every: -1},
		"negative done":        {Done: -1},
		"negative cancelled":   {Cancelled: -time.Hour},
		"negative failed":      {Failed: -time.Hour},
		"negative batch":       {BatchSize: -1},
		"batch over the limit": {BatchSize: MaxRetentionBatch + 1},
	}
	for name, r := range refused {
		if _, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handler: handler, Retention: r}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	for name, c := range map[string]struct {
		in, want WorkerRetention
	}{
		"defaults": {WorkerRetention{}, WorkerRetention{Every: 5 * time.Minute, Done: 24 * time.Hour, Cancelled: 24 * time.Hour, Failed: 7 * 24 * time.Hour}},
		"off":      {WorkerRetention{Off: true}, WorkerRetention{Off: true, Every: 5 * time.Minute, Done: 24 * time.Hour, Cancelled: 24 * time.Hour, Failed: 7 * 24 * time.Hour}},
		"set": {WorkerRetention{Every: time.Minute, Done: time.Hour, Cancelled: 2 * time.Hour, Failed: 3 * time.Hour, BatchSize: MaxRetentionBatch},
			WorkerRetention{Every: time.Minute, Done: time.Hour, Cancelled: 2 * time.Hour, Failed: 3 * time.Hour, BatchSize: MaxRetentionBatch}},
	} {
		w, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handler: handler, Retention: c.in})
		if err != nil || w.cfg.Retention != c.want {
			t.Errorf("%s: %+v, %v; want %+v", name, w.cfg.Retention, err, c.want)
		}
	}
	if got := EventRetention.String(); got != "retention" {
		t.Errorf("EventRetention is %q", got)
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	p, err := RetryPolicy{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxAttempts != 25 || p.Backoff != time.Second || p.MaxBackoff != time.Hour || p.Multiplier != 2 ||
		p.Jitter != 0.1 || p.Random == nil {
		t.Fatalf("resolved zero policy %+v", p)
	}
	// The default delays, undisturbed and at the largest jitter: doubling
	// from 1s, 34m8s the last below the hour's cap; about 13 hours in all.
	undisturbed, _ := RetryPolicy{Random: func() float64 { return 0 }}.resolve()
	shortest, _ := RetryPolicy{Random: func() float64 { return 0.999999 }}.resolve()
	var total time.Duration
	for n := 1; n < 25; n++ {
		d := undisturbed.backoff(n)
		if want := min(time.Second<<(n-1), time.Hour); d != want {
			t.Fatalf("default backoff(%d) = %v, want %v", n, d, want)
		}
		if low := shortest.backoff(n); low < d*9/10 || low > d*9/10+d/1000 {
			t.Fatalf("default backoff(%d) at the largest jitter = %v, want a tenth off %v", n, low, d)
		}
		total += d
	}
	if undisturbed.backoff(12) != 2048*time.Second || total != 4095*time.Second+12*time.Hour {
		t.Fatalf("default backoff(12) %v, total %v", undisturbed.backoff(12), total)
	}
	// A policy with a field set takes the other fields' defaults, and no
	// jitter; MaxAttempts 1 retries none.
	if p, err = (RetryPolicy{MaxAttempts: 1}).resolve(); err != nil || p.MaxAttempts != 1 || p.Jitter != 0 || p.Backoff != time.Second {
		t.Fatalf("no retries: %+v, %v", p, err)
	}
	if p, err = (RetryPolicy{Backoff: time.Hour}).resolve(); err != nil || p.MaxBackoff != time.Hour {
		t.Fatalf("a Backoff above the default cap: %+v, %v; want MaxBackoff = Backoff", p, err)
	}
	var perr *RetryPolicyError
	if _, err = (RetryPolicy{Jitter: 2}).resolve(); !errors.As(err, &perr) || perr.Field != "Jitter" ||
		!errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "Retry.Jitter") {
		t.Fatalf("jitter 2: %v", err)
	}
}

func TestRetryPolicyBackoff(t *testing.T) {
	draws := []float64{0, 0.5, 0.999, -1, 7}
	p, err := RetryPolicy{MaxAttempts: 10, Backoff: 100 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 3, Jitter: 0.2,
		Random: func() float64 { r := draws[0]; draws = draws[1:]; return r }}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	// 100ms, 300ms, 900ms, 2.7s capped at 1s, 8.1s capped at 1s; less
	// 0.2 * draw, a draw outside [0, 1) clamped.
	want := []time.Duration{100 * time.Millisecond, 270 * time.Millisecond, 720180 * time.Microsecond, time.Second, 800 * time.Millisecond}
	for i, w := range want {
		if got := p.backoff(i + 1); got != w {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	flat, _ := RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Hour, Multiplier: 1}.resolve()
	if got := flat.backoff(1000); got != time.Microsecond {
		t.Errorf("multiplier 1 backoff(1000) = %v", got)
	}
	huge, _ := RetryPolicy{Backoff: time.Hour, MaxBackoff: 24 * time.Hour}.resolve()
	if got := huge.backoff(1 << 30); got != 24*time.Hour {
		t.Errorf("an overflowing exponent gave %v, want the cap", got)
	}
}

func TestErrorText(t *testing.T) {
	cases := map[string]string{
		"":                              "",
		"plain":                         "plain",
		"a\x00b\xffc":                   "a\uFFFDb\uFFFDc",
		strings.Repeat("x", 2001):       strings.Repeat("x", 2000),
		strings.Repeat("€", 667):        strings.Repeat("€", 666),
		strings.Repeat("é", 1000) + "":  strings.Repeat("é", 1000),
		"x" + strings.Repeat("é", 1000): "x" + strings.Repeat("é", 999),
	}
	for in, want := range cases {
		if got := errorText(in); got != want {
			t.Errorf("errorText(%d bytes) = %d bytes, want %d", len(in), len(got), len(want))
		}
	}
}

func TestRunErrorsDecode(t *testing.T) {
	got := runErrors([]byte(`[{"attempt": 2, "at": "2026-12-01T10:00:00.123456+00:00", "kind": "panic", "error": "x"}, {"attempt": "bad"}]`))
	at := time.Date(2026, 12, 1, 10, 0, 0, 123456000, time.UTC)
	if len(got) != 1 || got[0].Attempt != 2 || !got[0].At.Equal(at) || got[0].Kind != "panic" || got[0].Error != "x" {
		t.Fatalf("decoded %+v", got)
	}
	if got := runErrors([]byte(`[]`)); got == nil || len(got) != 0 {
		t.Fatalf("empty history decoded as %#v", got)
	}
}

// The default claim-ahead holds as many runs as the handlers finish while
// a claim call takes, from moving averages of both, within its bound; a
// fixed one ignores what it measures.
func TestClaimAheadFollowsClaimAndHandlerTimes(t *testing.T) {
	a := newClaimAhead(WorkerConfig{Concurrency: 2})
	if a.bound != 8 || a.target() != 0 {
		t.Fatalf("bound %d, target %d before any time; want 8 and 0", a.bound, a.target())
	}
	a.observeClaim(15 * time.Millisecond)
	if a.target() != 0 {
		t.Fatalf("target %d with no handler time, want 0", a.target())
	}
	a.observeHandler(5 * time.Millisecond)
	if a.target() != 6 { // 2 x 15 / 5
		t.Fatalf("target %d, want 6", a.target())
	}
	// A handler of 100 ms: the average moves a fifth of the way, to 24 ms.
	a.observeHandler(100 * time.Millisecond)
	if a.handler.Value() != 24*time.Millisecond || a.target() != 1 { // round(2 x 15 / 24)
		t.Fatalf("handler average %v, target %d; want 24ms and 1", a.handler.Value(), a.target())
	}
	// Long handlers: none ahead.
	for range 50 {
		a.observeHandler(time.Second)
	}
	if a.target() != 0 {
		t.Fatalf("target %d with one-second handlers, want 0", a.target())
	}
	// Slow claims against short handlers: the bound.
	for range 50 {
		a.observeClaim(time.Second)
		a.observeHandler(time.Millisecond)
	}
	if a.target() != 8 {
		t.Fatalf("target %d, want the bound 8", a.target())
	}
	fixed := newClaimAhead(WorkerConfig{Concurrency: 2, Tuning: WorkerTuning{ClaimAhead: 3}})
	fixed.observeClaim(time.Second)
	fixed.observeHandler(time.Millisecond)
	if fixed.target() != 3 {
		t.Fatalf("fixed target %d, want 3", fixed.target())
	}
	wide := newClaimAhead(WorkerConfig{Concurrency: 100})
	if wide.bound != adaptiveAheadMax {
		t.Fatalf("bound of 100 handlers %d, want %d", wide.bound, adaptiveAheadMax)
	}
}

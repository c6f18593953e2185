package docket

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRetryPolicyDefaults(t *testing.T) {
	p, err := RetryPolicy{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxAttempts != 1 || p.Backoff != time.Second || p.MaxBackoff != 10*time.Minute || p.Multiplier != 2 ||
		p.Jitter != 0 || p.Random == nil {
		t.Fatalf("resolved zero policy %+v", p)
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

package docket

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

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

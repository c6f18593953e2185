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
		"negative every":       {Every: -1, Keep: time.Hour},
		"negative keep":        {Every: time.Minute, Keep: -1},
		"no keep":              {Every: time.Minute},
		"negative batch":       {Every: time.Minute, Keep: time.Hour, BatchSize: -1},
		"batch over the limit": {Every: time.Minute, Keep: time.Hour, BatchSize: MaxRetentionBatch + 1},
	}
	for name, r := range refused {
		if _, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handler: handler, Retention: r}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", name, err)
		}
	}
	for name, r := range map[string]WorkerRetention{
		"off":           {},
		"on":            {Every: time.Minute, Keep: time.Hour},
		"largest batch": {Every: time.Minute, Keep: time.Hour, BatchSize: MaxRetentionBatch},
	} {
		if _, err := NewWorker(client, WorkerConfig{Concurrency: 1, Handler: handler, Retention: r}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := EventRetention.String(); got != "retention" {
		t.Errorf("EventRetention is %q", got)
	}
}

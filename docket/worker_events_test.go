package docket

import (
	"errors"
	"fmt"
	"testing"
)

func TestVerdictOutcomeClassifiesWriteErrors(t *testing.T) {
	cases := map[string]struct {
		err  error
		want VerdictOutcome
	}{
		"written":           {nil, VerdictWritten},
		"claim given up":    {errReleased, VerdictDropped},
		"stale fence":       {fmt.Errorf("commit: %w", ErrStaleFence), VerdictFenced},
		"run gone":          {fmt.Errorf("commit: %w", ErrNotFound), VerdictFenced},
		"invalid state":     {fmt.Errorf("commit: %w", ErrInvalidArgument), VerdictFailed},
		"database failure":  {errors.New("connection reset"), VerdictFailed},
		"claim lost by TTL": {fmt.Errorf("%w: not refreshed", ErrClaimLost), VerdictFailed},
		"run cancelled":     {cancelledFence{stale: fmt.Errorf("commit: %w", ErrStaleFence)}, VerdictCancelled},
	}
	for name, c := range cases {
		if got := verdictOutcome(c.err); got != c.want {
			t.Errorf("%s: outcome %s, want %s", name, got, c.want)
		}
	}
}

func TestWorkerEventNames(t *testing.T) {
	kinds := map[WorkerEventKind]string{EventListening: "listening", EventClaimed: "claimed",
		EventHandlerStarted: "handler_started", EventVerdict: "verdict", 0: "unknown"}
	for k, want := range kinds {
		if got := k.String(); got != want {
			t.Errorf("kind %d: %q, want %q", int(k), got, want)
		}
	}
	outcomes := map[VerdictOutcome]string{VerdictWritten: "written", VerdictFenced: "fenced",
		VerdictDropped: "dropped", VerdictFailed: "failed", VerdictCancelled: "cancelled", 0: "unknown"}
	for o, want := range outcomes {
		if got := o.String(); got != want {
			t.Errorf("outcome %d: %q, want %q", int(o), got, want)
		}
	}
}

package docket

import (
	"testing"
	"time"
)

// Freed slots wait for the rest as long as the last claim call took, within
// the bounds.
func TestClaimGatherFollowsTheLastCall(t *testing.T) {
	for took, want := range map[time.Duration]time.Duration{
		0:                        minClaimGather,
		time.Millisecond:         minClaimGather,
		7 * time.Millisecond:     7 * time.Millisecond,
		maxClaimGather:           maxClaimGather,
		workerCallTimeout:        maxClaimGather,
		minClaimGather + 1:       minClaimGather + 1,
		maxClaimGather - 1:       maxClaimGather - 1,
		-time.Millisecond:        minClaimGather,
		maxClaimGather + 1:       maxClaimGather,
		3 * time.Millisecond / 2: minClaimGather,
	} {
		if got := claimGather(took); got != want {
			t.Errorf("claimGather(%v) = %v, want %v", took, got, want)
		}
	}
}

// A noted due time stays until a claim call that started at or after it
// served it, even once it passed: a call that started before it could not
// see the run due, so the loop must claim again for it.
func TestDueTimesStayUntilAClaimCallServesThem(t *testing.T) {
	w := &Worker{cfg: WorkerConfig{PollInterval: time.Hour}, dueNoted: make(chan struct{}, 1)}
	due := time.Now().Add(-time.Millisecond)
	w.noteDue(due)
	w.noteDue(time.Now().Add(2 * time.Hour)) // after the next poll: not noted
	if len(w.dueNoted) != 1 {
		t.Fatalf("the poll loop was not told of the due time")
	}
	w.dropDues(due.Add(-time.Microsecond))
	if got, ok := w.nextDue(); !ok || !got.Equal(due) {
		t.Fatalf("next due %v %v after a call that started before it, want %v", got, ok, due)
	}
	w.dropDues(due)
	if got, ok := w.nextDue(); ok {
		t.Fatalf("next due %v after a call that started at it, want none", got)
	}
}

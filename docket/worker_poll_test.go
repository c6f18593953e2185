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

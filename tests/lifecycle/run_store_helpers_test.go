package lifecycle

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// expectClaimed fails unless r is claimed by token, admitted at admittedAt,
// unscheduled and healthy running.
func expectClaimed(t *testing.T, r testkit.RunRow, token uuid.UUID, admittedAt time.Time) {
	t.Helper()
	if r.Status != "running" || r.Token == nil || *r.Token != token.String() || r.ClaimedAt == nil ||
		r.WakeAt != nil || r.PoisonedAt != nil || r.AdmittedAt == nil || !r.AdmittedAt.Equal(admittedAt) {
		t.Fatalf("want running, claimed by %s, admitted at %s, no wake: got %+v", token, admittedAt, r)
	}
}

// expectUnclaimed fails unless r holds no claim.
func expectUnclaimed(t *testing.T, r testkit.RunRow) {
	t.Helper()
	if r.Token != nil || r.ClaimedAt != nil {
		t.Fatalf("want no claim, got token %v claimed_at %v", r.Token, r.ClaimedAt)
	}
}

// expectNoMarker fails unless r holds no admission marker.
func expectNoMarker(t *testing.T, r testkit.RunRow) {
	t.Helper()
	if r.AdmittedAt != nil {
		t.Fatalf("want no admission marker, got %s", r.AdmittedAt)
	}
}

// expectSameTime fails unless got is non-nil and equal to want.
func expectSameTime(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil || !got.Equal(want) {
		t.Fatalf("%s: want %s, got %v", what, want, got)
	}
}

// expectRowUnchanged fails unless the row is exactly as before.
func expectRowUnchanged(t *testing.T, what string, before, after testkit.RunRow) {
	t.Helper()
	if !rowsEqual(before, after) {
		t.Fatalf("%s changed the run:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

func rowsEqual(a, b testkit.RunRow) bool {
	return a.Status == b.Status && eqStr(a.Token, b.Token) && eqTime(a.ClaimedAt, b.ClaimedAt) &&
		eqTime(a.WakeAt, b.WakeAt) && eqTime(a.AdmittedAt, b.AdmittedAt) &&
		eqTime(a.PoisonedAt, b.PoisonedAt) && eqStr(a.PoisonReason, b.PoisonReason) &&
		eqTime(a.FinishedAt, b.FinishedAt) && a.Attempts == b.Attempts && a.Abandons == b.Abandons &&
		a.Seq == b.Seq && a.UpdatedAt.Equal(b.UpdatedAt) && a.Unfinished == b.Unfinished
}

func eqStr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func eqTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

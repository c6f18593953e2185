package policy

import (
	"time"

	"github.com/google/uuid"
)

// Inspection is one visit of a TenantFair call; docket.ClaimTrace lists
// them as docket.ClaimInspection.
type Inspection struct {
	CallToken     uuid.UUID
	TransactionID int64
	// Visit numbers the visits of the call from 1.
	Visit  int
	Demand int
	// CursorBefore is the call-local cursor before the visit; CursorAfter
	// is the visited RingPosition.
	CursorBefore int64
	CursorAfter  int64
	RingPosition int64
	// ScopeKey is the visited partition ("" is the tenantless owner).
	ScopeKey    string
	Disposition Disposition
	// Outcomes counts the outcomes of the visit; EpochDelta is 1 for a grant.
	Outcomes   int
	EpochDelta int
	// Parked reports that this visit parked its partition (parked mode
	// only; the disposition is then empty_page, or rate_limited for a
	// partition waiting for its next token). ParkedUntil is the time it
	// wakes, nil when it is parked until a write.
	Parked      bool
	ParkedUntil *time.Time
	// Woken is the number of partitions the call's wake sweep unparked
	// before its walk, the same on every visit of a call (0 outside parked
	// mode).
	Woken int
}

package claimpolicy

import (
	"time"

	"github.com/google/uuid"
)

// Row is one production row of a claim call: the public columns of an
// outcome or error row. Its fields match the generated rows of the
// production claim queries, so the run store converts them directly.
type Row struct {
	RowKind       *string
	ErrorReason   *string
	RunID         *string
	TenantID      *string
	GraphID       *string
	GraphHash     *string
	CheckpointSeq *int64
	ClaimToken    *uuid.UUID
	ClaimedAt     *time.Time
	ClaimAttempt  *int32
	PoisonedAt    *time.Time
	PoisonReason  *string
	WorkClass     *string
	EligibleAt    *time.Time
}

// TraceRow is one row of a traced claim call: every public and internal
// column. Its fields match the generated rows of the trace queries.
type TraceRow struct {
	RowKind        *string
	ErrorReason    *string
	RunID          *string
	TenantID       *string
	GraphID        *string
	GraphHash      *string
	CheckpointSeq  *int64
	ClaimToken     *uuid.UUID
	ClaimedAt      *time.Time
	ClaimAttempt   *int32
	PoisonedAt     *time.Time
	PoisonReason   *string
	WorkClass      *string
	EligibleAt     *time.Time
	CallToken      *uuid.UUID
	TransactionID  *int64
	VisitOrdinal   *int32
	OutcomeOrdinal *int32
	Demand         *int32
	CursorBefore   *int64
	CursorAfter    *int64
	RingPosition   *int64
	ScopeKey       *string
	Disposition    *string
	OutcomeCount   *int32
	EpochDelta     *int32
}

// public returns the public columns of r.
func (r TraceRow) public() Row {
	return Row{
		RowKind:       r.RowKind,
		ErrorReason:   r.ErrorReason,
		RunID:         r.RunID,
		TenantID:      r.TenantID,
		GraphID:       r.GraphID,
		GraphHash:     r.GraphHash,
		CheckpointSeq: r.CheckpointSeq,
		ClaimToken:    r.ClaimToken,
		ClaimedAt:     r.ClaimedAt,
		ClaimAttempt:  r.ClaimAttempt,
		PoisonedAt:    r.PoisonedAt,
		PoisonReason:  r.PoisonReason,
		WorkClass:     r.WorkClass,
		EligibleAt:    r.EligibleAt,
	}
}

// The row_kind values of the SQL contract.
const (
	rowKindOutcome    = "outcome"
	rowKindError      = "error"
	rowKindInspection = "inspection"
)

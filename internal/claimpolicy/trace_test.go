package claimpolicy_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

// traceOutcome is a traced lease row of visit 1 with disposition.
func traceOutcome(class, disposition string, visit int32) claimpolicy.TraceRow {
	r := leaseRow()
	r.WorkClass = ptr(class)
	tr := claimpolicy.TraceRow{
		RowKind: r.RowKind, RunID: r.RunID, TenantID: r.TenantID, GraphID: r.GraphID,
		GraphHash: r.GraphHash, CheckpointSeq: r.CheckpointSeq, ClaimToken: r.ClaimToken,
		ClaimedAt: r.ClaimedAt, ClaimAttempt: r.ClaimAttempt, WorkClass: r.WorkClass,
		EligibleAt: r.EligibleAt, CallToken: ptr(uuid.Nil), TransactionID: ptr(int64(77)),
		VisitOrdinal: ptr(visit), OutcomeOrdinal: ptr(int32(1)), Demand: ptr(int32(3)),
	}
	if disposition != "" {
		tr.Disposition = ptr(disposition)
	}
	return tr
}

// traceInspection is an inspection row of visit 1 at position 4.
func traceInspection(disposition string, outcomes, epochDelta int32) claimpolicy.TraceRow {
	return claimpolicy.TraceRow{
		RowKind: ptr("inspection"), CallToken: ptr(uuid.Nil), TransactionID: ptr(int64(77)),
		VisitOrdinal: ptr(int32(1)), Demand: ptr(int32(3)), CursorBefore: ptr(int64(2)),
		CursorAfter: ptr(int64(4)), RingPosition: ptr(int64(4)), ScopeKey: ptr("acme"),
		Disposition: ptr(disposition), OutcomeCount: ptr(outcomes), EpochDelta: ptr(epochDelta),
	}
}

func TestDecodeTraceTenantFair(t *testing.T) {
	tr, err := claimpolicy.TenantFair{}.DecodeTrace([]claimpolicy.TraceRow{
		traceOutcome("queued_ready", "queued_promotion", 1),
		traceInspection("grant", 1, 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Result.Outcomes) != 1 || tr.Outcomes[0].Visit != 1 || tr.Outcomes[0].Disposition != policy.OutcomeQueuedPromotion ||
		tr.Outcomes[0].TransactionID != 77 {
		t.Fatalf("outcomes = %+v", tr.Outcomes)
	}
	want := policy.Inspection{CallToken: uuid.Nil, TransactionID: 77, Visit: 1, Demand: 3, CursorBefore: 2,
		CursorAfter: 4, RingPosition: 4, ScopeKey: "acme", Disposition: policy.DispositionGrant, Outcomes: 1, EpochDelta: 1}
	if len(tr.Inspections) != 1 || tr.Inspections[0] != want {
		t.Fatalf("inspections = %+v", tr.Inspections)
	}
}

func TestDecodeTraceLegacy(t *testing.T) {
	tr, err := claimpolicy.Legacy{}.DecodeTrace([]claimpolicy.TraceRow{
		traceOutcome("queued_ready", "", 0),
		traceOutcome("expired", "expired_recovery", 0),
	})
	if err != nil || len(tr.Outcomes) != 2 || tr.Outcomes[0].Disposition != "" || len(tr.Inspections) != 0 {
		t.Fatalf("trace = %+v, %v", tr, err)
	}
}

func TestDecodeTraceRefusesMalformedRows(t *testing.T) {
	moved := traceInspection("stale", 0, 0)
	moved.CursorAfter = ptr(int64(5))
	cases := []struct {
		name   string
		engine claimpolicy.Engine
		rows   []claimpolicy.TraceRow
	}{
		{"wrong TenantFair disposition", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceOutcome("queued_ready", "admitted_reacquisition", 1)}},
		{"TenantFair outcome without visit", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceOutcome("queued_ready", "queued_promotion", 0)}},
		{"Legacy outcome with a visit", claimpolicy.Legacy{}, []claimpolicy.TraceRow{traceOutcome("queued_ready", "", 1)}},
		{"Legacy ready outcome with a disposition", claimpolicy.Legacy{}, []claimpolicy.TraceRow{traceOutcome("queued_ready", "queued_promotion", 0)}},
		{"Legacy inspection", claimpolicy.Legacy{}, []claimpolicy.TraceRow{traceInspection("empty_page", 0, 0)}},
		{"unknown inspection disposition", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceInspection("skipped", 0, 0)}},
		{"grant without outcomes", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceInspection("grant", 0, 1)}},
		{"denial with outcomes", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceInspection("denied", 1, 0)}},
		{"grant without epoch", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceInspection("grant", 1, 0)}},
		{"grant above Q", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{traceInspection("grant", 9, 1)}},
		{"cursor not at the visited position", claimpolicy.TenantFair{}, []claimpolicy.TraceRow{moved}},
	}
	for _, tc := range cases {
		if _, err := tc.engine.DecodeTrace(tc.rows); !errors.Is(err, claimpolicy.ErrMalformedRow) {
			t.Fatalf("%s: err = %v, want ErrMalformedRow", tc.name, err)
		}
	}
	_, err := claimpolicy.TenantFair{}.DecodeTrace([]claimpolicy.TraceRow{{RowKind: ptr("error"), ErrorReason: ptr("inactive_engine")}})
	var unavailable *claimpolicy.UnavailableError
	if !errors.As(err, &unavailable) || unavailable.Reason != "inactive_engine" {
		t.Fatalf("error row: %v", err)
	}
}

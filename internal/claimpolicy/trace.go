package claimpolicy

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/policy"
)

// Trace is the decoded trace of one claim call. It carries call, scope,
// cursor and run identity, so it is for trusted inspection and tests only,
// never for metric labels.
type Trace struct {
	// Result holds the outcomes exactly as Decode would.
	Result Result
	// Outcomes describes each outcome of Result, in the same order.
	Outcomes []OutcomeTrace
	// Inspections holds one entry per TenantFair visit, in visit order.
	Inspections []policy.Inspection
}

// OutcomeTrace is the internal view of one outcome.
type OutcomeTrace struct {
	// Visit is the visit that produced the outcome (0 for Legacy).
	Visit int
	// Ordinal numbers the outcomes of the call from 1 in mutation order.
	Ordinal int
	// Disposition is the outcome disposition ("" for Legacy ready rows).
	Disposition policy.OutcomeDisposition
	// CallToken identifies the call; TransactionID its transaction.
	CallToken     uuid.UUID
	TransactionID int64
}

// decodeTrace decodes the rows of a traced call of the engine whose outcome
// dispositions dispositionOf gives; withVisits says whether the engine visits
// ring positions (TenantFair) or not (Legacy).
func decodeTrace(rows []TraceRow, dispositionOf func(policy.WorkClass) policy.OutcomeDisposition, withVisits bool) (Trace, error) {
	var tr Trace
	for i, r := range rows {
		kind, err := required(r.RowKind, "row_kind")
		if err != nil {
			return Trace{}, malformed(i, err)
		}
		switch kind {
		case rowKindError:
			if len(rows) != 1 {
				return Trace{}, malformed(i, errors.New("an error row must be the only row"))
			}
			return Trace{}, decodeError(r.public())
		case rowKindOutcome:
			o, err := decodeOutcome(r.public())
			if err != nil {
				return Trace{}, malformed(i, err)
			}
			ot, err := decodeOutcomeTrace(r, dispositionOf(o.Class), withVisits)
			if err != nil {
				return Trace{}, malformed(i, err)
			}
			tr.Result.Outcomes = append(tr.Result.Outcomes, o)
			tr.Outcomes = append(tr.Outcomes, ot)
		case rowKindInspection:
			if !withVisits {
				return Trace{}, malformed(i, errors.New("an inspection row from an engine without visits"))
			}
			in, err := decodeInspection(r)
			if err != nil {
				return Trace{}, malformed(i, err)
			}
			tr.Inspections = append(tr.Inspections, in)
		default:
			return Trace{}, malformed(i, fmt.Errorf("row_kind %q", kind))
		}
	}
	return tr, nil
}

// decodeOutcomeTrace decodes the internal columns of an outcome row.
func decodeOutcomeTrace(r TraceRow, want policy.OutcomeDisposition, withVisits bool) (OutcomeTrace, error) {
	var ot OutcomeTrace
	var err error
	if ot.CallToken, err = required(r.CallToken, "call_token"); err != nil {
		return OutcomeTrace{}, err
	}
	if ot.TransactionID, err = required(r.TransactionID, "transaction_id"); err != nil {
		return OutcomeTrace{}, err
	}
	visit, err := required(r.VisitOrdinal, "visit_ordinal")
	if err != nil {
		return OutcomeTrace{}, err
	}
	if (visit >= 1) != withVisits || visit < 0 {
		return OutcomeTrace{}, fmt.Errorf("visit_ordinal %d", visit)
	}
	ordinal, err := required(r.OutcomeOrdinal, "outcome_ordinal")
	if err != nil {
		return OutcomeTrace{}, err
	}
	if ordinal < 1 {
		return OutcomeTrace{}, fmt.Errorf("outcome_ordinal %d", ordinal)
	}
	ot.Visit, ot.Ordinal = int(visit), int(ordinal)
	var got policy.OutcomeDisposition
	if r.Disposition != nil {
		got = policy.OutcomeDisposition(*r.Disposition)
	}
	if got != want || (want == "") != (r.Disposition == nil) {
		return OutcomeTrace{}, fmt.Errorf("outcome disposition %q, want %q", got, want)
	}
	ot.Disposition = got
	return ot, nil
}

// decodeInspection decodes one inspection row.
func decodeInspection(r TraceRow) (policy.Inspection, error) {
	var in policy.Inspection
	var err error
	if in.CallToken, err = required(r.CallToken, "call_token"); err != nil {
		return policy.Inspection{}, err
	}
	if in.TransactionID, err = required(r.TransactionID, "transaction_id"); err != nil {
		return policy.Inspection{}, err
	}
	visit, err := required(r.VisitOrdinal, "visit_ordinal")
	if err != nil {
		return policy.Inspection{}, err
	}
	demand, err := required(r.Demand, "demand")
	if err != nil {
		return policy.Inspection{}, err
	}
	if in.CursorBefore, err = required(r.CursorBefore, "cursor_before"); err != nil {
		return policy.Inspection{}, err
	}
	if in.CursorAfter, err = required(r.CursorAfter, "cursor_after"); err != nil {
		return policy.Inspection{}, err
	}
	if in.RingPosition, err = required(r.RingPosition, "ring_position"); err != nil {
		return policy.Inspection{}, err
	}
	if in.ScopeKey, err = required(r.ScopeKey, "scope_key"); err != nil {
		return policy.Inspection{}, err
	}
	disposition, err := required(r.Disposition, "disposition")
	if err != nil {
		return policy.Inspection{}, err
	}
	outcomes, err := required(r.OutcomeCount, "outcome_count")
	if err != nil {
		return policy.Inspection{}, err
	}
	epochDelta, err := required(r.EpochDelta, "epoch_delta")
	if err != nil {
		return policy.Inspection{}, err
	}
	in.Visit, in.Demand = int(visit), int(demand)
	in.Disposition = policy.Disposition(disposition)
	in.Outcomes, in.EpochDelta = int(outcomes), int(epochDelta)
	if err := decodePark(r, &in); err != nil {
		return policy.Inspection{}, err
	}
	granted := in.Disposition == policy.DispositionGrant
	wantEpochDelta := 0
	if granted {
		wantEpochDelta = 1
	}
	switch {
	case !validDisposition(in.Disposition):
		return policy.Inspection{}, fmt.Errorf("inspection disposition %q", disposition)
	case in.Visit < 1 || in.Visit > policy.InspectionsPerCall:
		return policy.Inspection{}, fmt.Errorf("visit_ordinal %d", in.Visit)
	case in.CursorAfter != in.RingPosition:
		return policy.Inspection{}, fmt.Errorf("cursor_after %d is not the visited position %d", in.CursorAfter, in.RingPosition)
	case granted != (in.Outcomes > 0) || in.Outcomes > policy.OutcomesPerGrant || in.Outcomes < 0:
		return policy.Inspection{}, fmt.Errorf("%d outcomes with disposition %q", in.Outcomes, disposition)
	case in.EpochDelta != wantEpochDelta:
		return policy.Inspection{}, fmt.Errorf("epoch_delta %d with disposition %q", in.EpochDelta, disposition)
	}
	return in, nil
}

// decodePark reads the park report of a parked-mode inspection row from the
// columns that are null on other inspection rows: outcome_ordinal 0 marks a
// park (of an empty_page or a rate_limited visit), eligible_at its wake
// time, claim_attempt
// the call's wake sweep count.
func decodePark(r TraceRow, in *policy.Inspection) error {
	if r.OutcomeOrdinal != nil {
		if *r.OutcomeOrdinal != 0 || (in.Disposition != policy.DispositionEmptyPage && in.Disposition != policy.DispositionRateLimited) {
			return fmt.Errorf("outcome_ordinal %d on an inspection with disposition %q", *r.OutcomeOrdinal, in.Disposition)
		}
		in.Parked = true
	}
	if r.EligibleAt != nil {
		if !in.Parked {
			return errors.New("eligible_at on an inspection that did not park")
		}
		at := *r.EligibleAt
		in.ParkedUntil = &at
	}
	if r.ClaimAttempt != nil {
		if *r.ClaimAttempt < 0 {
			return fmt.Errorf("wake sweep count %d", *r.ClaimAttempt)
		}
		in.Woken = int(*r.ClaimAttempt)
	}
	return nil
}

package claimpolicy

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/policy"
)

// ErrMalformedRow reports a claim row outside the SQL contract: an unknown
// row kind, class, reason or disposition, a missing column, a lease without
// a token, or an error row mixed with outcomes. Decode never guesses.
var ErrMalformedRow = errors.New("policy: malformed claim row")

// UnavailableError is a claim call the engine refused without changing
// anything; Reason is one of the Reason constants.
type UnavailableError struct {
	// Reason is the function's error_reason.
	Reason string
}

func (e *UnavailableError) Error() string {
	return "policy: claim unavailable: " + e.Reason
}

// Outcome is one committed outcome of a claim call: a lease or a poison.
type Outcome struct {
	RunID string
	// TenantID is nil for the tenantless owner.
	TenantID      *string
	GraphID       string
	GraphHash     string
	CheckpointSeq int64
	Class         policy.WorkClass
	// EligibleAt is the old wake_at (ready) or claimed_at (expired).
	EligibleAt time.Time
	// Attempt is claim_attempts after the outcome (a poison leaves it as it was).
	Attempt int
	// Poisoned tells a poison outcome from a lease.
	Poisoned bool
	// ClaimToken and ClaimedAt are set for a lease only.
	ClaimToken uuid.UUID
	ClaimedAt  time.Time
	// PoisonedAt and PoisonReason are set for a poison only.
	PoisonedAt   time.Time
	PoisonReason string
}

// Result is the decoded result of a claim call: its outcomes in visit and
// outcome order.
type Result struct {
	Outcomes []Outcome
}

// decodeRows decodes production rows. A single error row becomes an
// *UnavailableError; anything outside the contract is ErrMalformedRow.
func decodeRows(rows []Row) (Result, error) {
	var res Result
	for i, r := range rows {
		kind, err := required(r.RowKind, "row_kind")
		if err != nil {
			return Result{}, malformed(i, err)
		}
		switch kind {
		case rowKindError:
			if len(rows) != 1 {
				return Result{}, malformed(i, errors.New("an error row must be the only row"))
			}
			return Result{}, decodeError(r)
		case rowKindOutcome:
			o, err := decodeOutcome(r)
			if err != nil {
				return Result{}, malformed(i, err)
			}
			res.Outcomes = append(res.Outcomes, o)
		default:
			return Result{}, malformed(i, fmt.Errorf("row_kind %q", kind))
		}
	}
	return res, nil
}

// decodeError turns an error row into an *UnavailableError.
func decodeError(r Row) error {
	reason, err := required(r.ErrorReason, "error_reason")
	if err != nil {
		return malformed(0, err)
	}
	if !knownReason(reason) {
		return malformed(0, fmt.Errorf("error_reason %q", reason))
	}
	return &UnavailableError{Reason: reason}
}

// decodeOutcome decodes one outcome row: a lease (token and claim time, no
// poison) or a poison (poison time and reason, no token).
func decodeOutcome(r Row) (Outcome, error) {
	var o Outcome
	var err error
	if o.RunID, err = required(r.RunID, "run_id"); err != nil {
		return Outcome{}, err
	}
	if o.GraphID, err = required(r.GraphID, "graph_id"); err != nil {
		return Outcome{}, err
	}
	if o.GraphHash, err = required(r.GraphHash, "graph_hash"); err != nil {
		return Outcome{}, err
	}
	if o.CheckpointSeq, err = required(r.CheckpointSeq, "checkpoint_seq"); err != nil {
		return Outcome{}, err
	}
	attempt, err := required(r.ClaimAttempt, "claim_attempt")
	if err != nil {
		return Outcome{}, err
	}
	o.Attempt = int(attempt)
	class, err := required(r.WorkClass, "work_class")
	if err != nil {
		return Outcome{}, err
	}
	o.Class = policy.WorkClass(class)
	if !validClass(o.Class) {
		return Outcome{}, fmt.Errorf("work_class %q", class)
	}
	if o.EligibleAt, err = required(r.EligibleAt, "eligible_at"); err != nil {
		return Outcome{}, err
	}
	if r.TenantID != nil && *r.TenantID == "" {
		return Outcome{}, errors.New("tenant_id is empty instead of NULL")
	}
	o.TenantID = r.TenantID

	leased := r.ClaimToken != nil || r.ClaimedAt != nil
	poisoned := r.PoisonedAt != nil || r.PoisonReason != nil
	switch {
	case leased && poisoned:
		return Outcome{}, errors.New("an outcome is both a lease and a poison")
	case leased:
		if r.ClaimToken == nil || r.ClaimedAt == nil || *r.ClaimToken == uuid.Nil {
			return Outcome{}, errors.New("a lease needs a non-nil claim_token and claimed_at")
		}
		if attempt < 1 {
			return Outcome{}, fmt.Errorf("a lease with claim_attempt %d", attempt)
		}
		o.ClaimToken, o.ClaimedAt = *r.ClaimToken, *r.ClaimedAt
	case poisoned:
		if r.PoisonedAt == nil || r.PoisonReason == nil || *r.PoisonReason != policy.PoisonMaxClaimAttempts {
			return Outcome{}, errors.New("a poison needs poisoned_at and the max_claim_attempts_exceeded reason")
		}
		o.Poisoned = true
		o.PoisonedAt, o.PoisonReason = *r.PoisonedAt, *r.PoisonReason
	default:
		return Outcome{}, errors.New("an outcome is neither a lease nor a poison")
	}
	return o, nil
}

// required dereferences a NOT NULL column of the contract.
func required[T any](v *T, column string) (T, error) {
	if v == nil {
		var zero T
		return zero, fmt.Errorf("%s is NULL", column)
	}
	return *v, nil
}

func malformed(row int, err error) error {
	return fmt.Errorf("%w: row at index %d: %w", ErrMalformedRow, row, err)
}

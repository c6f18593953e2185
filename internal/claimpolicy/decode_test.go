package claimpolicy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

var (
	testNow   = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	testToken = uuid.MustParse("5b0b7c1e-7d3a-4e55-9d7e-0c1f2a3b4c5d")
)

func ptr[T any](v T) *T { return &v }

// leaseRow is a valid production lease row.
func leaseRow() claimpolicy.Row {
	return claimpolicy.Row{
		RowKind:       ptr("outcome"),
		RunID:         ptr("run-1"),
		TenantID:      ptr("acme"),
		GraphID:       ptr("g"),
		GraphHash:     ptr("h"),
		CheckpointSeq: ptr(int64(4)),
		ClaimToken:    ptr(testToken),
		ClaimedAt:     ptr(testNow),
		ClaimAttempt:  ptr(int32(2)),
		WorkClass:     ptr("queued_ready"),
		EligibleAt:    ptr(testNow.Add(-time.Minute)),
	}
}

// poisonRow is a valid production poison row.
func poisonRow() claimpolicy.Row {
	r := leaseRow()
	r.ClaimToken, r.ClaimedAt = nil, nil
	r.PoisonedAt, r.PoisonReason = ptr(testNow), ptr("max_claim_attempts_exceeded")
	r.WorkClass = ptr("expired")
	return r
}

func TestDecodeLeaseAndPoison(t *testing.T) {
	res, err := claimpolicy.TenantFair{}.Decode([]claimpolicy.Row{leaseRow(), poisonRow()})
	if err != nil {
		t.Fatal(err)
	}
	want := []claimpolicy.Outcome{
		{RunID: "run-1", TenantID: ptr("acme"), GraphID: "g", GraphHash: "h", CheckpointSeq: 4,
			Class: policy.ClassQueuedReady, EligibleAt: testNow.Add(-time.Minute), Attempt: 2,
			ClaimToken: testToken, ClaimedAt: testNow},
		{RunID: "run-1", TenantID: ptr("acme"), GraphID: "g", GraphHash: "h", CheckpointSeq: 4,
			Class: policy.ClassExpired, EligibleAt: testNow.Add(-time.Minute), Attempt: 2,
			Poisoned: true, PoisonedAt: testNow, PoisonReason: "max_claim_attempts_exceeded"},
	}
	if len(res.Outcomes) != len(want) {
		t.Fatalf("outcomes = %+v", res.Outcomes)
	}
	for i := range want {
		got := res.Outcomes[i]
		if *got.TenantID != *want[i].TenantID {
			t.Fatalf("outcome %d tenant %v", i, *got.TenantID)
		}
		got.TenantID, want[i].TenantID = nil, nil
		if got != want[i] {
			t.Fatalf("outcome %d = %+v, want %+v", i, got, want[i])
		}
	}
}

func TestDecodeEmptyAndTenantless(t *testing.T) {
	res, err := claimpolicy.Legacy{}.Decode(nil)
	if err != nil || len(res.Outcomes) != 0 {
		t.Fatalf("no rows: %+v, %v", res, err)
	}
	r := leaseRow()
	r.TenantID = nil
	res, err = claimpolicy.Legacy{}.Decode([]claimpolicy.Row{r})
	if err != nil || res.Outcomes[0].TenantID != nil {
		t.Fatalf("tenantless: %+v, %v", res, err)
	}
}

func TestDecodeErrorRow(t *testing.T) {
	for _, reason := range []string{"read_only_transaction", "unsupported_isolation", "lock_contention",
		"not_initialized", "inactive_engine", "malformed_policy"} {
		_, err := claimpolicy.TenantFair{}.Decode([]claimpolicy.Row{{RowKind: ptr("error"), ErrorReason: ptr(reason)}})
		var unavailable *claimpolicy.UnavailableError
		if !errors.As(err, &unavailable) || unavailable.Reason != reason {
			t.Fatalf("%s: err = %v", reason, err)
		}
	}
}

func TestDecodeRefusesMalformedRows(t *testing.T) {
	cases := map[string][]claimpolicy.Row{
		"no row kind":          {func() claimpolicy.Row { r := leaseRow(); r.RowKind = nil; return r }()},
		"unknown row kind":     {func() claimpolicy.Row { r := leaseRow(); r.RowKind = ptr("grant"); return r }()},
		"inspection row":       {func() claimpolicy.Row { r := leaseRow(); r.RowKind = ptr("inspection"); return r }()},
		"unknown class":        {func() claimpolicy.Row { r := leaseRow(); r.WorkClass = ptr("ready"); return r }()},
		"no run id":            {func() claimpolicy.Row { r := leaseRow(); r.RunID = nil; return r }()},
		"no eligible time":     {func() claimpolicy.Row { r := leaseRow(); r.EligibleAt = nil; return r }()},
		"empty tenant id":      {func() claimpolicy.Row { r := leaseRow(); r.TenantID = ptr(""); return r }()},
		"lease without token":  {func() claimpolicy.Row { r := leaseRow(); r.ClaimToken = nil; return r }()},
		"lease with nil token": {func() claimpolicy.Row { r := leaseRow(); r.ClaimToken = ptr(uuid.Nil); return r }()},
		"lease at attempt 0":   {func() claimpolicy.Row { r := leaseRow(); r.ClaimAttempt = ptr(int32(0)); return r }()},
		"lease and poison":     {func() claimpolicy.Row { r := leaseRow(); r.PoisonedAt = ptr(testNow); return r }()},
		"neither":              {func() claimpolicy.Row { r := poisonRow(); r.PoisonedAt, r.PoisonReason = nil, nil; return r }()},
		"poison without time":  {func() claimpolicy.Row { r := poisonRow(); r.PoisonedAt = nil; return r }()},
		"abandon poison": {func() claimpolicy.Row {
			r := poisonRow()
			r.PoisonReason = ptr("max_claim_abandons_exceeded")
			return r
		}()},
		"unknown error reason": {{RowKind: ptr("error"), ErrorReason: ptr("busy")}},
		"error without reason": {{RowKind: ptr("error")}},
		"error with outcomes":  {leaseRow(), {RowKind: ptr("error"), ErrorReason: ptr("lock_contention")}},
	}
	for name, rows := range cases {
		for _, engine := range []claimpolicy.Engine{claimpolicy.TenantFair{}, claimpolicy.Legacy{}} {
			if _, err := engine.Decode(rows); !errors.Is(err, claimpolicy.ErrMalformedRow) {
				t.Fatalf("%s (%s): err = %v, want ErrMalformedRow", name, engine.Name(), err)
			}
		}
	}
}

package claimpolicy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

func TestDecodeTraceParkReport(t *testing.T) {
	until := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	parked := traceInspection("empty_page", 0, 0)
	parked.OutcomeOrdinal = ptr(int32(0))
	parked.EligibleAt = &until
	parked.ClaimAttempt = ptr(int32(3))
	forGood := traceInspection("empty_page", 0, 0)
	forGood.OutcomeOrdinal = ptr(int32(0))
	forGood.ClaimAttempt = ptr(int32(3))
	awake := traceInspection("grant", 1, 1)
	awake.ClaimAttempt = ptr(int32(3))
	tr, err := claimpolicy.TenantFair{}.DecodeTrace([]claimpolicy.TraceRow{parked, forGood, awake})
	if err != nil {
		t.Fatal(err)
	}
	got := tr.Inspections
	if len(got) != 3 || !got[0].Parked || got[0].ParkedUntil == nil || !got[0].ParkedUntil.Equal(until) ||
		!got[1].Parked || got[1].ParkedUntil != nil || got[2].Parked || got[2].ParkedUntil != nil {
		t.Fatalf("park reports = %+v", got)
	}
	for _, in := range got {
		if in.Woken != 3 {
			t.Fatalf("woken = %d, want 3", in.Woken)
		}
	}

	untimed := traceInspection("empty_page", 0, 0)
	untimed.EligibleAt = &until
	grantParked := traceInspection("grant", 1, 1)
	grantParked.OutcomeOrdinal = ptr(int32(0))
	oddOrdinal := traceInspection("empty_page", 0, 0)
	oddOrdinal.OutcomeOrdinal = ptr(int32(2))
	negative := traceInspection("empty_page", 0, 0)
	negative.ClaimAttempt = ptr(int32(-1))
	for name, row := range map[string]claimpolicy.TraceRow{
		"a wake time without a park": untimed,
		"a grant that parked":        grantParked,
		"an outcome ordinal of 2":    oddOrdinal,
		"a negative sweep count":     negative,
	} {
		if _, err := (claimpolicy.TenantFair{}).DecodeTrace([]claimpolicy.TraceRow{row}); !errors.Is(err, claimpolicy.ErrMalformedRow) {
			t.Errorf("%s: err = %v, want ErrMalformedRow", name, err)
		}
	}
}

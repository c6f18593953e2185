package oracle

import (
	"fmt"
	"testing"
	"time"
)

// parkedOf returns the park state of scope's partition.
func parkedOf(t *testing.T, m *Model, scope string) (bool, time.Time) {
	t.Helper()
	p, ok := m.Partition(scope)
	if !ok {
		t.Fatalf("no partition %q", scope)
	}
	return p.Parked, p.ParkedUntil
}

// walkParkedUnparked turns parked mode on without the batch park of the
// switch, as a domain whose batch park skipped every row (each held by a
// writer) is left: the walk has to park what is dormant.
func walkParkedUnparked(m *Model) { m.park = true }

func TestModelParkedWalkParksDormantPartitions(t *testing.T) {
	m := newTestModel(t, 10)
	insert(t, m, "a", "a-timer", at(3600))
	insert(t, m, "b", "b-1", at(-60))
	insert(t, m, "b", "b-2", at(-50))
	walkParkedUnparked(m)

	res, err := m.Claim(at(0), at(-3600), 1, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Inspections) != 2 || !res.Inspections[0].Parked || !res.Inspections[0].ParkedUntil.Equal(at(3600)) ||
		res.Inspections[1].Disposition != DispGrant || res.Inspections[1].Parked {
		t.Fatalf("inspections %+v, want a parked until +1h, then a grant of b", res.Inspections)
	}
	// Only b is awake; the unfilled call revisits it up to S times.
	res, err = m.Claim(at(0), at(-3600), 2, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Inspections) != m.Budgets().S {
		t.Fatalf("%d inspections, want S", len(res.Inspections))
	}
	for _, in := range res.Inspections {
		if in.Scope != "b" {
			t.Fatalf("visit of parked %q: %+v", in.Scope, in)
		}
	}
	// The sweep at the timer wakes a before the walk.
	res, err = m.Claim(at(3600), at(0), 1, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inspections[0].Woken != 1 || res.Inspections[0].Scope != "a" || res.Inspections[0].Disposition != DispGrant {
		t.Fatalf("inspections %+v, want a woken and granted", res.Inspections)
	}
	if parked, _ := parkedOf(t, m, "a"); parked {
		t.Fatal("a is still parked")
	}
}

func TestModelParkedWakeByWrite(t *testing.T) {
	m := newTestModel(t, 10)
	m.SetParkDormant(true)
	insert(t, m, "a", "a-timer", at(7200))
	insert(t, m, "b", "b-1", at(-60))
	if _, err := m.Claim(at(0), at(-3600), 1, 10, PreferNone); err != nil {
		t.Fatal(err)
	}
	if parked, until := parkedOf(t, m, "a"); !parked || !until.Equal(at(7200)) {
		t.Fatalf("a parked %v until %v, want until +2h", parked, until)
	}
	// An insert due later parks no later than its wake time.
	insert(t, m, "a", "a-soon", at(600))
	if _, until := parkedOf(t, m, "a"); !until.Equal(at(600)) {
		t.Fatalf("a parked until %v after an insert due at +10m", until)
	}
	// A wake_at moved to now unparks it.
	if err := m.MutateRun("a-timer", StatusRunning, at(10), at(10)); err != nil {
		t.Fatal(err)
	}
	if parked, _ := parkedOf(t, m, "a"); parked {
		t.Fatal("a is still parked after its run became due at the write")
	}
	// Turning parking off unparks everything and stops parking.
	insert(t, m, "c", "c-timer", at(7200))
	res, err := m.Claim(at(20), at(-3600), 1, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if parked, _ := parkedOf(t, m, "c"); !parked {
		t.Fatalf("c not parked: %+v", res.Inspections)
	}
	m.SetParkDormant(false)
	if parked, _ := parkedOf(t, m, "c"); parked || m.ParkDormant() {
		t.Fatal("turning parking off left c parked")
	}
	res, err = m.Claim(at(20), at(-3600), 1, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range res.Inspections {
		if in.Parked || in.Woken != 0 {
			t.Fatalf("spec-mode inspection %+v parks or sweeps", in)
		}
	}
	if parked, _ := parkedOf(t, m, "c"); parked {
		t.Fatal("a spec-mode call parked c")
	}
}

func TestModelParkedSweepIsBounded(t *testing.T) {
	m := newTestModel(t, 10)
	m.SetParkDormant(true)
	for i := range WakeBatch + 6 {
		insert(t, m, fmt.Sprintf("t%03d", i), fmt.Sprintf("r%03d", i), at(3600+i))
	}
	for range 3 {
		if _, err := m.Claim(at(0), at(-3600), 1, 10, PreferNone); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Claim(at(7200), at(3600), 1, 10, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if res.Inspections[0].Woken != WakeBatch {
		t.Fatalf("first sweep woke %d, want %d", res.Inspections[0].Woken, WakeBatch)
	}
	for i := range WakeBatch + 6 {
		parked, _ := parkedOf(t, m, fmt.Sprintf("t%03d", i))
		if want := i >= WakeBatch; parked != want {
			t.Fatalf("t%03d parked %v, want %v (earliest first)", i, parked, want)
		}
	}
}

func TestModelParksOnInsertIntoEmptyPartition(t *testing.T) {
	m := newTestModel(t, 10)
	m.SetParkDormant(true)
	insert(t, m, "a", "a-timer", at(3600))
	if parked, until := parkedOf(t, m, "a"); !parked || !until.Equal(at(3600)) {
		t.Fatalf("a parked %v until %v, want until +1h", parked, until)
	}
	// A second run of a parked partition only moves its time earlier.
	insert(t, m, "a", "a-earlier", at(600))
	insert(t, m, "a", "a-later", at(7200))
	if _, until := parkedOf(t, m, "a"); !until.Equal(at(600)) {
		t.Fatalf("a parked until %v, want +10m", until)
	}
	// A paused partition is never parked on write.
	m.Pause("p")
	insert(t, m, "p", "p-timer", at(3600))
	if parked, _ := parkedOf(t, m, "p"); parked {
		t.Fatal("paused p was parked on insert")
	}
	// With parking off nothing parks on write.
	m.SetParkDormant(false)
	insert(t, m, "c", "c-timer", at(3600))
	if parked, _ := parkedOf(t, m, "c"); parked {
		t.Fatal("c was parked with parking off")
	}
}

func TestModelSwitchOnParksDormantPartitions(t *testing.T) {
	m := newTestModel(t, 10)
	insert(t, m, "a", "a-timer", at(3600))
	insert(t, m, "b", "b-1", at(-60))
	insert(t, m, "p", "p-timer", at(3600))
	m.Pause("p")
	if _, err := m.Claim(at(0), at(-3600), 1, 10, PreferNone); err != nil {
		t.Fatal(err)
	}
	m.SetParkDormant(true)
	if parked, until := parkedOf(t, m, "a"); !parked || !until.Equal(at(3600)) {
		t.Fatalf("a parked %v until %v, want until +1h", parked, until)
	}
	if parked, _ := parkedOf(t, m, "b"); parked {
		t.Fatal("b, which holds a claim, was parked")
	}
	if parked, _ := parkedOf(t, m, "p"); parked {
		t.Fatal("paused p was parked")
	}
}

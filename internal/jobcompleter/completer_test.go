package jobcompleter

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// statements records the statements a completer sent and answers each
// item with the item times ten.
type statements struct {
	mu      sync.Mutex
	batches [][]int
	// deadline says whether each statement's context had a deadline.
	deadline []bool
	fail     error
}

func (s *statements) flush(ctx context.Context, items []int) ([]Result[int], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, slices.Clone(items))
	_, ok := ctx.Deadline()
	s.deadline = append(s.deadline, ok)
	if s.fail != nil {
		return nil, s.fail
	}
	out := make([]Result[int], len(items))
	for i, it := range items {
		out[i].Value = it * 10
	}
	return out, nil
}

func newCompleter(s *statements, wait time.Duration, maxBatch int) *Completer[int, int] {
	return New(Config[int, int]{
		Flush: s.flush, CallTimeout: time.Minute,
		BatchWait: wait, MaxBatch: maxBatch,
		LingerFor: func(time.Duration) time.Duration { return time.Millisecond }, AdaptiveBatch: 4,
	})
}

// A verdict is written under the call timeout and gets its own result.
func TestCompleteWritesUnderTheCallTimeout(t *testing.T) {
	s := &statements{}
	c := newCompleter(s, 0, 0)
	var cohort Cohort
	got, size, err := c.Complete(context.Background(), c.Join(&cohort), 4, never)
	if err != nil || got != 40 || size != 1 {
		t.Fatalf("verdict: %d, size %d, err %v; want 40, 1, nil", got, size, err)
	}
	if !slices.Equal(s.deadline, []bool{true}) {
		t.Fatalf("statement deadlines %v, want [true]", s.deadline)
	}
}

// The verdicts of one cohort share a statement once every member wrote.
func TestCompleteGroupsACohort(t *testing.T) {
	s := &statements{}
	c := newCompleter(s, 0, 0)
	var cohort Cohort
	members := []*Member{c.Join(&cohort), c.Join(&cohort), c.Join(&cohort)}
	var wg sync.WaitGroup
	sizes := make([]int, len(members))
	for i, m := range members {
		wg.Go(func() { _, sizes[i], _ = c.Complete(context.Background(), m, i+1, never) })
	}
	wg.Wait()
	if len(s.batches) != 1 || !slices.Equal(sizes, []int{3, 3, 3}) {
		t.Fatalf("batches %v, sizes %v; want one statement of 3", s.batches, sizes)
	}
}

// With a batch wait, verdicts linger until MaxBatch of them are pending,
// whatever their cohorts.
func TestCompleteLingersForAFullBatch(t *testing.T) {
	s := &statements{}
	c := newCompleter(s, time.Hour, 2)
	var a, b Cohort
	var wg sync.WaitGroup
	for i, cohort := range []*Cohort{&a, &b} {
		m := c.Join(cohort)
		wg.Go(func() { _, _, _ = c.Complete(context.Background(), m, i+1, never) })
	}
	wg.Wait()
	if len(s.batches) != 1 || len(s.batches[0]) != 2 {
		t.Fatalf("batches %v, want one statement of 2", s.batches)
	}
}

// A statement that failed as a whole is ErrFlushFailed for its verdict.
func TestCompleteReportsAFailedStatement(t *testing.T) {
	boom := errors.New("boom")
	s := &statements{fail: boom}
	c := newCompleter(s, 0, 0)
	var cohort Cohort
	_, _, err := c.Complete(context.Background(), c.Join(&cohort), 1, never)
	if !errors.Is(err, ErrFlushFailed) || !errors.Is(err, boom) {
		t.Fatalf("err %v, want ErrFlushFailed wrapping boom", err)
	}
}

package oracle

import (
	"fmt"
	"slices"
	"sort"
)

// nextPosition returns the first position of the ascending, non-empty slice
// ring that is strictly greater than cursor, wrapping to the smallest
// position. This is the one cursor rule shared by the checker and the model.
func nextPosition(ring []int64, cursor int64) int64 {
	i := sort.Search(len(ring), func(i int) bool { return ring[i] > cursor })
	if i == len(ring) {
		return ring[0]
	}
	return ring[i]
}

// fixedRing is a validated ring C.
type fixedRing struct {
	sorted  []int64
	scopeOf map[int64]string
	posOf   map[string]int64
}

// newFixedRing validates C: non-empty, positive positions, one position per
// scope.
func newFixedRing(c map[int64]string) (fixedRing, error) {
	if len(c) == 0 {
		return fixedRing{}, &WindowError{Field: "Ring", Reason: "empty ring"}
	}
	r := fixedRing{scopeOf: make(map[int64]string, len(c)), posOf: make(map[string]int64, len(c))}
	for pos, scope := range c {
		if pos <= 0 {
			return fixedRing{}, &WindowError{Field: "Ring", Reason: fmt.Sprintf("position %d is not positive", pos)}
		}
		if other, dup := r.posOf[scope]; dup {
			return fixedRing{}, &WindowError{Field: "Ring", Reason: fmt.Sprintf("scope %q at positions %d and %d", scope, other, pos)}
		}
		r.scopeOf[pos] = scope
		r.posOf[scope] = pos
		r.sorted = append(r.sorted, pos)
	}
	slices.Sort(r.sorted)
	return r, nil
}

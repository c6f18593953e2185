package oracle_test

import (
	"fmt"

	"github.com/docketrun/docket-go/oracle"
)

// The fixed-window bounds of a cohort of 20 busy tenants on a ring of
// 20,020 positions, with the engine's budgets (S = 32 inspections per
// unfilled call, Q = 8 outcomes per grant) and a target whose inspections
// never fail (L = 0); a ring smaller than its cohort is refused.
func ExampleBounds() {
	b, err := oracle.Bounds(20, 20020, 32, 8, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("competing grants:", b.CompetingGrants)
	fmt.Println("competing outcomes:", b.CompetingOutcomes)
	fmt.Println("qualifying calls:", b.QualifyingCalls)
	_, err = oracle.Bounds(20, 10, 32, 8, 0)
	fmt.Println(err)
	// Output:
	// competing grants: 19
	// competing outcomes: 152
	// qualifying calls: 645
	// oracle: invalid bounds input H = 10: want H >= A (A = 20)
}

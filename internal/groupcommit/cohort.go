package groupcommit

// Cohort is a set of members whose writes the leader of a batch waits for.
// Its zero value is an empty cohort; the group's mutex guards it.
type Cohort struct {
	// awaiting counts the members that neither wrote nor settled yet.
	awaiting int
}

// Member is one caller of a cohort whose write is still expected. The
// group's mutex guards it.
type Member struct {
	cohort  *Cohort
	awaited bool
}

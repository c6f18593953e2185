package testkit

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// DiffCheckTB is the testing.TB given to pgtest for one rapid check: its
// cleanups (dropping the database) run when the check ends instead of when
// the whole test ends, so a long soak does not accumulate databases.
type DiffCheckTB struct {
	testing.TB
	cleanups []func()
}

// Cleanup defers f to the end of the check.
func (c *DiffCheckTB) Cleanup(f func()) { c.cleanups = append(c.cleanups, f) }

// finish runs the cleanups in reverse order.
func (c *DiffCheckTB) Finish() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}

// DiffDefaultChecks makes n the number of rapid checks of the calling test
// unless -rapid.checks or RAPID_CHECKS chose one, keeping the default run
// modest (rapid's own default is 100). The caller must not be parallel: then
// no other rapid test reads the flag meanwhile, because parallel tests wait
// until every sequential test has finished.
func DiffDefaultChecks(t *testing.T, n int) {
	f := flag.Lookup("rapid.checks")
	if f == nil {
		t.Fatal("rapid registers no -rapid.checks flag")
	}
	chosen := false
	flag.Visit(func(v *flag.Flag) { chosen = chosen || v.Name == f.Name })
	if _, env := os.LookupEnv("RAPID_CHECKS"); chosen || env {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

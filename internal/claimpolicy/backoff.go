package claimpolicy

import (
	"math/rand/v2"
	"time"
)

// ContentionBackoff is the short jittered wait after a claim call refused
// for lock contention (another caller held the policy row past the lock
// wait), which is normal under many pollers: 10 to 60 ms, so the callers
// that were refused together do not all come back together.
func ContentionBackoff() time.Duration {
	return 10*time.Millisecond + rand.N(50*time.Millisecond)
}

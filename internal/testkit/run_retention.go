package testkit

import (
	"time"
)

// RetentionCutoff is the retention cutoff of these tests.
var RetentionCutoff = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

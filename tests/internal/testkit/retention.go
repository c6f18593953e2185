package testkit

import (
	"time"
)

// RetentionCutoff is the cutoff the retention tests delete runs before.
var RetentionCutoff = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

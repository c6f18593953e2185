package heartbeat

import (
	"sync/atomic"
	"time"
)

// Held records the latest time a claim was known to be held: by a refresh,
// or by any other write the store accepted under the claim. Its zero value
// is the zero time; it is safe for concurrent use.
type Held struct {
	at atomic.Int64
}

// Confirm records that the claim was held at t.
func (h *Held) Confirm(t time.Time) { h.at.Store(t.UnixNano()) }

// At is the latest time the claim was known to be held.
func (h *Held) At() time.Time { return time.Unix(0, h.at.Load()) }

package docket

import (
	"context"

	"github.com/docketrun/docket-go/gen"
)

// leaseRead is the one read of the runs a claim call leased, shared by their
// jobs, so a claim of n runs costs one read instead of n.
type leaseRead struct {
	// done is closed once runs and err are set.
	done chan struct{}
	runs map[string]gen.GetRunsByKeysRow
	err  error

	// awaiting counts the call's jobs whose verdict may still join the
	// next group commit (Job.awaited); the group commit's mutex guards it.
	awaiting int
}

// readLeases reads the runs of leases, whose jobs already started and wait
// for the result in prepare while their heartbeats run.
func (w *Worker) readLeases(io context.Context, r *leaseRead, leases []Lease) {
	defer close(r.done)
	holders := make([]Holder, len(leases))
	for i, l := range leases {
		holders[i] = l.Holder()
	}
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	defer cancel()
	r.runs, r.err = w.client.fetchHeld(ctx, holders)
}

// row waits for the read and returns the row of runID; a run the read did
// not find in its scope is ErrNotFound.
func (r *leaseRead) row(runID string) (gen.GetRunsByKeysRow, error) {
	<-r.done
	if r.err != nil {
		return gen.GetRunsByKeysRow{}, r.err
	}
	row, found := r.runs[runID]
	if !found {
		return gen.GetRunsByKeysRow{}, runNotFound(runID)
	}
	return row, nil
}

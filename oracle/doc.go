// Package oracle is the database-free reference for the TenantFair claim
// policy of Docket.
//
// It has three parts:
//
//   - Bounds computes the fixed-window bounds (competing grants, competing
//     outcomes, qualifying calls).
//   - Check and CheckMechanics verify committed claim traces (one Event per
//     inspection) against the scheduler invariants 1-5, the pause and token
//     rules and the bounds, and report the observed counts; CheckRate
//     verifies a partition's committed promotion times against its Rate.
//   - Model is a deterministic in-memory implementation of the TenantFair
//     claim algorithm (caps, pauses and rates included), of the
//     tenant-blind Legacy engine, and of the run
//     lifecycle operations that change eligibility. The database
//     implementation is compared against it.
//
// docs/claim-algorithm.md describes the algorithm, the window, the
// invariants, the bounds and the run lifecycle this package implements.
//
// Where the algorithm leaves an order open, the model follows the
// engine and says so on the method: for example InsertRuns gives a batch's new
// partitions their ring positions in scope-key order, not in input order.
//
// The package imports nothing else from this module, and it keeps its own
// vocabulary (work classes, preferences, dispositions, statuses) on purpose
// instead of naming the policy package's: the differential tests compare
// the model's spellings with the strings the database returns, so a value
// renamed or added on the implementation side shows up as a difference
// instead of moving the reference along with it.
package oracle

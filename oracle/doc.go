// Package oracle is the database-free reference for the TenantFair claim
// policy of Docket.
//
// It has three parts:
//
//   - Bounds computes the fixed-window bounds of the specification
//     (competing grants, competing outcomes, qualifying calls).
//   - Check and CheckMechanics verify committed claim traces (one Event per
//     inspection) against the scheduler invariants 1-5 and the bounds, and
//     report the observed counts.
//   - Model is a deterministic in-memory implementation of the TenantFair
//     claim algorithm (ARCHITECTURE section 4), of the tenant-blind Legacy
//     engine, and of the run lifecycle operations that change eligibility
//     (ARCHITECTURE section 5). The database implementation is compared
//     against it.
//
// The package imports nothing else from this module.
package oracle

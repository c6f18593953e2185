// Package gen is the sqlc-generated typed repository of Docket: one Go
// accessor per query in db/queries, over the tables of db/schema. Every file
// here but this one is written by `make generate`; CI fails when they drift.
//
// Apps may embed it in their own pgx transactions (gen.New(tx)), and their
// own sqlc queries may join Docket's tables. What is safe to call directly:
//
//   - Reads: GetRun, InspectRun, ListRuns, ListRunsAfter, GetClaimPolicy,
//     InspectClaimScope, ListClaimSchedule, ListRingPositions. They take the
//     scope key ("" for the tenantless scope, else the tenant id) and change
//     nothing. ListDomainRuns, ListDomainRunsAfter and
//     ListClaimPartitionScopes read across every scope, for operator tooling.
//
// Everything else writes or locks, and goes through the docket facade,
// which validates input, fences holders by claim token and checkpoint
// sequence, keeps the admission marker and the tenant caps exact, wakes
// Workers and records telemetry: inserts (InsertRun skips validation and the
// wake-up notification), claims, commits, releases, mutations, policy
// writes, startup and migration statements. Calling them directly can break
// the invariants the README's run lifecycle describes; the triggers and
// checks refuse many mistakes, not all.
//
// Stability: the accessors above and the models (DocketRun and the
// docket_claim_* tables) follow the schema version; a release that changes
// them says so in CHANGELOG.md with a new migration. Query texts exported
// as constants are for the facade and may change in any release.
package gen

// Package gen is the sqlc-generated typed repository of Docket: one Go
// accessor per query in db/queries, over the tables of db/schema. Every file
// here but this one is written by `make generate`; CI fails when they drift.
//
// Apps may embed it in their own pgx transactions (gen.New(tx)) next to the
// docket facade, and their own sqlc queries may join Docket's tables. The
// accessors name Docket's relations unqualified, each behind the comment
// /*schema*/: with docket.Config.Schema set, the transaction's search_path
// must resolve to that schema, or the app's DBTX replaces each marker with
// the quoted schema and a dot, as the facade does for its own statements.
//
// Safe to call directly, on any connection or inside the app's transaction:
//
//   - Reads, which change nothing: GetRun, InspectRun, ListRuns,
//     ListRunsAfter, GetClaimPolicy, InspectClaimScope, ListClaimSchedule,
//     ListRingPositions, RingPositions. They take the scope key ("" for the
//     tenantless scope, else the tenant id). ListDomainRuns,
//     ListDomainRunsAfter and ListClaimPartitionScopes read across every
//     scope, for operator tooling; RunsDueChannel names the domain's LISTEN
//     channel. The console's reads (ConsoleDomainSummary, ConsoleRunsByStatus,
//     ConsoleActivity, ConsoleTenantsByScope, ConsoleTenantsByUnfinished,
//     ConsoleTenantsByQueued, ConsoleTenantsByDebt, ConsoleLastGrants,
//     ConsoleRingStart, ConsoleRingWindow), the schedule reads GetSchedule,
//     ListSchedules and NextScheduleTick, and ExistingRunIDs and
//     OlderQueuedRuns read too. A DocketRun row carries the claim token, the holder's proof
//     of its lease, which the facade's Run never shows: keep it out of logs
//     and responses.
//   - Inserts, whose bookkeeping the triggers on docket_runs do in the same
//     statement (the owner partition, its ring position and counters), so
//     they keep the claim invariants: InsertRun and InsertRuns. They skip
//     what docket.Client.InsertRunTx adds: the tenant mode, the identifier
//     rules and the document checks, refused before any SQL with typed
//     errors that leave the transaction usable, and the wake-up of listening
//     Workers, which NotifyRunsDue (safe too) in the same transaction sends
//     at commit.
//
// Only through the facade, because their safety depends on arguments the
// facade validates, on how it reads their rows, or on a protocol of several
// statements:
//
//   - Claim calls: TenantFairClaim, TenantFairClaimTrace, LegacyClaim,
//     LegacyClaimTrace, TenantFairClaimNoted, LegacyClaimNoted, LeasedRuns
//     and CommitClaimAsynchronously. The facade bounds the demand, the
//     attempts and the times, calls only the active engine, and turns the
//     error rows (a refusal returns rows, not an error) into typed errors;
//     the asynchronous-commit setting must never reach a caller's
//     transaction.
//   - Holder writes, fenced by the claim token and the checkpoint sequence
//     the facade carries from the lease, and the reads of that protocol:
//     CommitRun, CommitRuns, RefreshClaim, ReleaseClaim, AbandonClaim,
//     CommitApplied (was a commit whose answer was lost applied),
//     GetRunFence (why a fenced write matched nothing).
//   - Compare-and-set and lifecycle writes: LockRun (the row lock a
//     mutation decides under, which also holds off claims of that run),
//     ApplyRunMutation, RetryPoisonedRun, RetryFinishedRun, and the
//     retention delete DeleteFinishedRuns, whose cutoff, batch size and
//     scope the facade checks.
//   - Policy writes: PutClaimPolicyDefault, PutClaimPolicyParkDormant,
//     EnsureClaimPartition, LockClaimPartition, PutClaimPartitionOverride,
//     and the startup statements LockClaimPolicy, InitializeClaimPolicy,
//     SetAdmissionMode, MarkLegacyClaimsAdmitted, SynchronizeParkDormant,
//     UnparkAllPartitions, which keep the markers and caps exact only in the
//     order the facade runs them.
//   - Schedule writes: InsertSchedule, SetSchedulePaused and DeleteSchedule
//     (compare-and-set on the version the facade checks), and the tick
//     protocol LockDueSchedules and AdvanceSchedules, whose ticks only the
//     facade inserts as runs in the same transaction (TakeDueTicksTx).
//   - LockSchedule and LockOtherClaimableRuns, row locks that dockettest.Work
//     and the schedule edits decide under.
//   - Migration statements: LockMigrations, RecordMigration and
//     ForgetMigration, which keep Docket's ledger in step with the applied
//     migrations only inside docket migrate.
//
// Calling these directly can break the invariants the run lifecycle
// of docs/manual.md describes; the triggers and checks refuse many mistakes, not
// all. The schema checks of Open (SchemaShape, MissingColumns,
// InstalledFunctionBodies) and the ledger reads (LedgerExists,
// LedgerVersions, LegacyLedgerHoldsDocket, LegacyLedgerVersions) change
// nothing, but they serve startup and migration and have no contract of
// their own.
//
// Stability: the safe accessors above and the models (DocketRun and the
// docket_claim_* tables) follow the schema version; a release that changes
// them says so in CHANGELOG.md with a new migration. The other accessors and
// the query texts exported as constants are for the facade and may change in
// any release.
package gen

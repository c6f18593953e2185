// Package gen is the public part of Docket's sqlc-generated repository: one
// Go accessor per query in db/queries/app, over the tables of db/schema, all
// of them safe to call directly, on any connection or inside the app's own
// pgx transaction (gen.New(tx)) next to the docket facade. Every file here
// but this one is written by `make generate`; CI fails when they drift.
//
// A query belongs in db/queries/app, and so in this package, only when
// calling it cannot break the invariants of the run lifecycle
// (docs/manual.md) whatever the arguments, which is the case for three
// kinds of statement:
//
//   - Reads: a select that takes no row lock, writes nothing and calls only
//     functions that cannot write (stable or immutable ones). Scoped reads
//     take the scope key ("" for the tenantless scope, else the tenant id);
//     the others read across every scope, for operator tooling. A DocketRun
//     row carries the claim token, the holder's proof of its lease, which
//     the facade's Run never shows: keep it out of logs and responses.
//   - Inserts of new runs into docket_runs, whose bookkeeping (the owner
//     partition, its ring position and counters) the table's triggers do in
//     the same statement, so the claim invariants hold; the table's checks
//     and triggers refuse what the facade refuses (the identifier rules,
//     tenantless runs under required tenancy). They skip what
//     docket.Client.InsertRunTx adds: those checks before any SQL with typed
//     errors that leave the transaction usable, the document checks, the
//     wake-up of listening Workers and the read of the run that holds a
//     unique key: a run whose unique key another run of its scope holds in
//     the same period bucket is skipped at the unique index without
//     raising by InsertRun (pgx.ErrNoRows) and InsertUniqueRuns (counted
//     out), and fails InsertRuns (docket.RunWriteError maps the unique
//     violation to docket.ErrUniqueRunExists).
//   - That wake-up: a notification on the domain's due-run channel with an
//     empty payload, which in the same transaction is sent at commit and
//     costs a Worker at most one claim call that finds nothing.
//
// Every other query (claim calls, holder writes fenced by the lease, row
// locks and compare-and-set writes, policy and schedule writes, startup and
// migration statements) stays in db/queries and is generated only into the
// facade's internal repository, because its safety depends on arguments the
// facade validates, on how the facade reads its rows or on a protocol of
// several statements; call the facade's method instead. A test in
// tests/migration derives both sets from the query files and checks this
// rule statement by statement.
//
// The accessors name Docket's relations and functions unqualified, each
// behind the comment /*schema*/. With docket.Config.Schema set, call them on
// docket.Client.SchemaDB(tx) (gen.New(client.SchemaDB(tx))), which qualifies
// each marked name and scopes the statement's search_path to Docket's schema
// while the app's transaction keeps its own; without it the connection's
// search_path must resolve Docket's schema. A run insert the database
// refuses maps to the facade's typed errors with docket.RunWriteError.
//
// Stability: the accessors and the models (DocketRun and the docket_claim_*
// tables) follow the schema version; a release that changes them says so in
// CHANGELOG.md with a new migration. The query texts exported as constants
// may change in any release.
package gen

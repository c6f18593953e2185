// Package docket is the public facade of Docket for Go: a PostgreSQL run
// store for multi-tenant services whose single admission entrypoint,
// ClaimDue, is served by one of two engines. TenantFair (policy.TenantFair)
// gives every tenant an exact cap on active runs and rotates fairly across
// the tenants that have work; Legacy (policy.Legacy) is tenant-blind, oldest
// first. One database schema is one fairness domain: its runs, tenants,
// caps, ring and cursor.
//
// # Main types
//
// A Migrator (NewMigrator, NewMigratorURL) installs the schema with Migrate
// or MigrateTx; Open returns a Client once the schema has the shape of the
// newest version this binary embeds, however it was applied (anything else
// is ErrSchemaMismatch). A Client inserts runs (InsertRun, and InsertRunTx
// inside the application's own transaction), claims them (ClaimDue,
// ClaimDueTx), writes the holder's commits (Commit, CommitTx, RefreshClaim,
// ReleaseClaim, AbandonClaim), reads them (FetchRun, InspectRun, ListRuns)
// and manages schedules of periodic runs (AddSchedule and the rest). Admin,
// from NewAdmin, holds the administration half alone (claim policy writes,
// listings, run retries, DeleteFinishedRuns) without synchronizing the
// policy row; a Client offers every Admin method too.
//
// Config configures Open: the TenantMode, the ClaimPolicy, the Schema and
// the logger, meter and tracer providers. Every run belongs to a Scope:
// Tenant(id) names a tenant, Tenantless is the scope of runs without one,
// and a run of another scope reads as ErrNotFound. A NewRun describes a run
// to insert: its RunID, Scope, GraphID and GraphHash and its JSON State
// (NewTypedRun encodes a Go value into it).
//
// NewWorker runs handlers on claimed runs with a WorkerConfig: its
// Concurrency, the claim TTL and heartbeat, a RetryPolicy, retention,
// schedules and an OnEvent hook. Its handlers are a Handlers registry, in
// which Register gives each graph id a handler that receives the run's
// state decoded into its own type, or one plain Handler for every graph.
// A handler returns a Result, made by Complete, Fail, FailNow, RetryAt,
// RetryAfter, RetryAtError, RetryAfterError, Continue, Yield or
// WaitExternal (TypedComplete and TypedContinue encode a typed state).
// Queues, from NewQueues, runs the Workers of several domains together and
// stops them with one Stop. Client.WorkLease works one lease the
// application claimed itself exactly as a Worker of one slot would.
//
// # Errors
//
// Every error is checkable with errors.Is or errors.As. The sentinels are
// ErrNotFound, ErrStale (a compare-and-set write met a newer version),
// ErrStaleFence and ErrClaimLost (a holder's claim is gone or outdated),
// ErrRunCancelled (an operator cancelled a claimed run),
// ErrDuplicateRun, ErrUniqueRunExists (a unique run's key is held; also a
// *UniqueRunsExistError for a batch), ErrInvalidTransition, ErrInvalidArgument,
// ErrInvalidConfig, ErrInvalidCap, ErrTenantRequired, ErrSchemaMismatch,
// ErrNotInitialized and ErrInactiveEngine (a refused claim call, also a
// *ClaimPolicyUnavailableError), ErrNoHandler, ErrInvalidSchedule,
// ErrDuplicateSchedule, ErrInvalidSchemaName, ErrOutsideLedger,
// ErrLedgerExists, ErrUnknownMigration, ErrMigrationOrder,
// ErrWorkerStopped and ErrWorkerStarted.
//
// # Example
//
// Enqueue a run, then work it off with a Worker until ctx ends:
//
//	client, err := docket.Open(ctx, pool, docket.Config{
//		Schema:      "docket",
//		TenantMode:  docket.TenantRequired,
//		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
//	})
//	if err != nil {
//		return err
//	}
//	run, err := docket.NewTypedRun(docket.NewRun{
//		RunID: "invoice-42", Scope: docket.Tenant("acme"),
//		GraphID: "send-invoice", GraphHash: "v1",
//	}, invoice{ID: 42})
//	if err != nil {
//		return err
//	}
//	if _, err := client.InsertRun(ctx, run); err != nil {
//		return err
//	}
//	handlers := docket.NewHandlers()
//	err = docket.Register(handlers, "send-invoice", func(ctx context.Context, job *docket.Job, inv invoice) docket.Result {
//		if err := sendInvoice(ctx, inv.ID); err != nil {
//			return docket.Fail(err) // retried under WorkerConfig.Retry
//		}
//		return docket.Complete(nil)
//	})
//	if err != nil {
//		return err
//	}
//	worker, err := docket.NewWorker(client, docket.WorkerConfig{Concurrency: 8, Handlers: handlers})
//	if err != nil {
//		return err
//	}
//	go func() {
//		<-ctx.Done()
//		_ = worker.Stop(context.WithoutCancel(ctx))
//	}()
//	return worker.Run(context.WithoutCancel(ctx))
//
// The README's quick start is the same program with the insert inside the
// application's transaction (examples/quickstart runs it).
//
// # Further reading
//
// In the repository: README.md (the quick start), docs/manual.md (the
// manual: configuration, the run lifecycle, the Worker, periodic runs,
// queues, traces, testing your app, administration), docs/architecture.md
// (the package map and how a claim and a Worker job flow through the
// files), docs/claim-algorithm.md (the claim algorithm and its bounds),
// docs/embedding.md (the app's own pool, schema and migration tool),
// docs/operations.md (rollout, grants, monitoring) and docs/telemetry.md
// (metrics and spans).
package docket

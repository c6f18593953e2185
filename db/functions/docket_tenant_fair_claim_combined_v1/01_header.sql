-- A TenantFair claim call that may serve the demand of other claimers too
-- (combined claims). Every TenantFair call holds the policy row, the domain's
-- one cursor, for its whole duration, so many small concurrent callers each
-- wait for the whole call of every caller ahead of them. Here one call at a
-- time is the domain's combiner: it holds a transaction-scoped advisory lock
-- keyed by the schema and runs one walk of docket_tenant_fair_claim for its
-- own demand plus that of every caller waiting for it, and leaves each
-- waiter its share of the outcomes as a delivery row
-- (docket_claim_deliveries). The walk itself is unchanged: it is one call of
-- the engine whose demand is the sum, with every rule, cap and bound of any
-- other call, under the policy row as always; callers that do not combine
-- (Legacy, ClaimDueTx, the trace calls, SoloClaims) meet the combiner only
-- there.
--
-- A caller that finds a combiner at work announces its demand without
-- committing anything: it takes a second advisory lock, its marker, whose
-- keys are its kind (below) and a ticket with its demand, and with the
-- marker held it waits for the combiner's commit on the combiner's lock in
-- shared mode. Locks are visible to every session as soon as they are
-- granted, so a combiner reads the markers of the callers waiting for it in
-- pg_locks when it starts; no request row needs a transaction and a commit
-- of its own, and a claim is one call. The marker and the shared lock are
-- taken in a subtransaction that is rolled back at the wake-up, so the
-- marker lives only while its caller waits, and no waiter keeps the next
-- combiner out. Every waiter wakes at the commit together and takes its
-- delivery, if any. A waiter its combiner did not serve (it announced after
-- the combiner read the markers) waits again while another combiner is at
-- work or queued for the lock, since that one reads the markers afterwards;
-- otherwise it queues for the lock to become the next combiner.
--
-- Reading pg_locks copies the server's whole lock table, every session's
-- locks of every database, so its cost grows with that table (about 4 ms
-- with 5,000 locks held elsewhere). A combiner reads it only when a ticket
-- was taken since the last read: it compares the ticket sequence with
-- docket_claim_tickets_read, where the last reader left it. An uncontended
-- call, which takes no ticket, never reads it. A waiter whose ticket was
-- taken before a read but whose marker came after it, with no ticket
-- taken since, is not read by the next combiner either; it goes on waiting
-- or combining as any unserved waiter does.
--
-- A combiner serves a marker only when no delivery of its ticket exists
-- yet: a waiter's marker may outlive, by the instant its rollback takes,
-- the shared lock that lets the next combiner in, and its delivery is
-- still there then, since the waiter collects it only after the rollback.
-- So every ticket is served at most once.
--
-- Every wait is bounded by the lock wait of docket_claim_precheck, with
-- one exception that keeps leases from being stranded. A waiter whose wait
-- runs out gives its marker up, but a combiner that read the marker before
-- it went may already be walking for it. A per-ticket advisory lock, the
-- served lock, settles which of the two owns the ticket: a combiner serves
-- a marker only when it gets that lock without waiting, and holds it to
-- its commit; a waiter that gives up takes it, waiting as long as a
-- combiner holds it, so it waits for the one combiner that may serve it
-- and collects what that one delivered. When nothing was delivered, the
-- waiter withdraws its ticket with an empty delivery row, its tombstone,
-- and answers 'lock_contention'; a combiner reads the deliveries again
-- after taking the served locks, so one that read the marker before the
-- waiter withdrew skips it, whether the waiter still holds the served lock
-- (the try fails) or has committed (the tombstone is visible). Tombstones
-- expire with the deliveries; only a combiner deletes either, and it holds
-- the combiner lock, so no combiner between its read and its check of the
-- markers ever sees a tombstone go. A delivery nobody collects (its caller
-- was cancelled or rolled back) is deleted by a later combiner after ten
-- seconds; its leases expire after their claim TTL, as those of a Worker
-- that stopped right after its claim.
--
-- A call that collects a delivery commits without waiting for its WAL
-- flush: it only deletes its delivery, the leases are the combiner's
-- writes, durable with the combiner's commit, and a delivery a crash brings
-- back is never collected and expires. A call that walks keeps the caller's
-- setting, since its commit makes its own leases durable. Either setting is
-- local to the caller's transaction, as every production claim call is its
-- own.
--
-- Only callers with the combiner's claim TTL, max attempts and preference
-- are combined, since the walk takes one of each: a marker's first key, its
-- kind, is a 32-bit hash of the schema and those three, and a combiner
-- reads only the markers of its own kind. A caller of demand over 255
-- (which a marker cannot hold) or of another kind waits for a combiner of
-- its own. Outcomes go to the waiters in ticket order, then to the
-- combiner: when the walk finds less than the combined demand, the callers
-- that waited longest are served first. An engine error (for example the
-- domain switched to Legacy) reaches only the combiner; its waiters find no
-- delivery and try again.
--
-- outcome_ordinal orders the rows returned (the engine's visit and outcome
-- order); the claim queries order by it.
create or replace function docket_tenant_fair_claim_combined(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text
) returns table (
    row_kind text,
    error_reason text,
    run_id text,
    tenant_id text,
    graph_id text,
    graph_hash text,
    checkpoint_seq bigint,
    claim_token uuid,
    claimed_at timestamptz,
    claim_attempt integer,
    poisoned_at timestamptz,
    poison_reason text,
    work_class text,
    eligible_at timestamptz,
    outcome_ordinal bigint
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
as $$

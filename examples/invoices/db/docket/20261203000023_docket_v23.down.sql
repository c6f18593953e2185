drop function docket_run_admitted(docket_runs);

-- include docket_tenant_fair_claim_combined_v6.sql
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
declare
    -- The combined demand of one walk stays within what one engine call can
    -- grant (S = 32 visits of at most Q = 8 outcomes); waiters beyond it
    -- wait for the next combiner.
    c_combined_demand constant integer := 256;
    -- A marker's second key is ticket * 256 + demand, within an integer.
    c_marker_demand constant integer := 256;
    -- A waiter gives up within the lock wait (250 ms), so a delivery older
    -- than this belongs to a caller that is gone.
    c_delivery_life constant interval := '10 seconds';

    -- The combiner's lock, one per schema (advisory locks are per database).
    v_key bigint := hashtextextended('docket_tenant_fair_claim_combined ' || current_schema(), 0);
    -- The markers' first key: the schema and what a walk takes one of.
    v_kind integer := hashtext('docket_tenant_fair_claim_combined marker ' || current_schema()
                               || ' ' || (p_now - p_cutoff)::text || ' ' || p_max_attempts::text
                               || ' ' || coalesce(p_preference, ''));
    -- The served locks' first key; the second is the ticket.
    v_served integer := hashtext('docket_tenant_fair_claim_combined served ' || current_schema());
    v_precheck record;
    v_restore_lock_timeout text;
    v_deadline timestamptz;
    v_ticket integer;
    v_timed_out boolean := false;
    v_lock_free boolean;
    v_own docket_claim_outcome[];
    v_markers integer[];
    v_issued integer;
    v_read integer;
    v_waiting integer;
    v_outcomes docket_claim_outcome[];
begin
    <<call>>
    begin
        v_precheck := docket_claim_precheck('docket_tenant_fair_claim_combined', p_now, p_cutoff,
                                            p_demand, p_max_attempts, p_preference, false);
        v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
        if v_precheck.o_error_reason is not null then
            row_kind := 'error';
            error_reason := v_precheck.o_error_reason;
            return next;
            exit call;
        end if;
        v_deadline := clock_timestamp() + current_setting('lock_timeout')::interval;

        <<wait>>
        loop
            -- statement combiner_lock
            exit wait when pg_try_advisory_xact_lock(v_key);
            -- end statement
            if v_ticket is null then
                v_ticket := nextval('docket_claim_tickets');
            end if;
            -- Announce the demand and wait for the combiner's commit, then
            -- give both locks back by rolling back the block's
            -- subtransaction.
            begin
                if clock_timestamp() >= v_deadline then
                    raise lock_not_available;
                end if;
                if p_demand < c_marker_demand then
                    -- statement marker
                    perform pg_advisory_xact_lock_shared(v_kind, v_ticket * c_marker_demand + p_demand);
                    -- end statement
                end if;
                -- statement combiner_wait
                perform pg_advisory_xact_lock_shared(v_key);
                -- end statement
                raise sqlstate 'DKW01';
            exception
                when sqlstate 'DKW01' then
                    null;
                when lock_not_available then
                    v_timed_out := true;
            end;
            if v_timed_out then
                -- The marker is gone. Take the ticket's served lock, which a
                -- combiner serving this ticket holds to its commit, before
                -- the collect below, so that the collect finds what such a
                -- combiner delivered. The lock is not bounded by the lock
                -- wait: it waits for one combiner that is already walking.
                loop
                    begin
                        -- statement served_lock
                        perform pg_advisory_xact_lock(v_served, v_ticket);
                        -- end statement
                        exit;
                    exception when lock_not_available then
                        null;
                    end;
                end loop;
            end if;
            -- statement delivery_collect
            delete from docket_claim_deliveries d
             where d.ticket = v_ticket
            returning d.outcomes into v_own;
            -- end statement
            if found then
                perform set_config('synchronous_commit', 'off', true);
                return query
                    select (v_own[g.i]).*, g.i::bigint
                      from generate_subscripts(v_own, 1) as g(i)
                     order by g.i;
                exit call;
            end if;
            if v_timed_out then
                -- Nothing was delivered: withdraw the ticket.
                -- statement tombstone_write
                insert into docket_claim_deliveries (ticket, outcomes)
                values (v_ticket, '{}');
                -- end statement
                row_kind := 'error';
                error_reason := 'lock_contention';
                return next;
                exit call;
            end if;
            -- Not served. A combiner that holds the lock now, or a caller
            -- queued for it, reads the markers after this one was taken, so
            -- the caller waits for that one's commit in shared mode, with the
            -- other waiters it serves; they would otherwise take the lock one
            -- after another, each only to collect its delivery. The probe is
            -- a shared try in a subtransaction: it fails only while the lock
            -- is held or awaited in exclusive mode, not while other waiters
            -- briefly hold it shared.
            begin
                -- statement combiner_probe
                v_lock_free := pg_try_advisory_xact_lock_shared(v_key);
                -- end statement
                raise sqlstate 'DKW01';
            exception when sqlstate 'DKW01' then
                null;
            end;
            continue wait when not v_lock_free;
            -- No combiner at work or queued: queue for the combiner's lock,
            -- which a waiter that arrives later then waits behind, instead of
            -- trying again: tries would fail while any waiter briefly holds
            -- the shared lock.
            begin
                -- statement combiner_queue
                perform pg_advisory_xact_lock(v_key);
                -- end statement
                exit wait;
            exception when lock_not_available then
                -- The wait's deadline has passed: the next round gives up.
                null;
            end;
        end loop;

        -- This call is the combiner. A delivery to its ticket from a combiner
        -- before it is collected as any waiter's.
        if v_ticket is not null then
            -- statement delivery_collect_own
            delete from docket_claim_deliveries d
             where d.ticket = v_ticket
            returning d.outcomes into v_own;
            -- end statement
            if found then
                perform set_config('synchronous_commit', 'off', true);
                return query
                    select (v_own[g.i]).*, g.i::bigint
                      from generate_subscripts(v_own, 1) as g(i)
                     order by g.i;
                exit call;
            end if;
        end if;

        -- statement tickets_read
        select case when t.is_called then t.last_value else 0 end,
               (select r.last_value from docket_claim_tickets_read r)
          into v_issued, v_read
          from docket_claim_tickets t;
        -- end statement
        if v_issued <> v_read then
            perform setval('docket_claim_tickets_read', v_issued);
            -- The markers of this kind held by the callers waiting now, in ticket
            -- order, within the combined demand.
            -- statement markers_read
            select array_agg(q.marker order by q.marker)
              into v_markers
              from (select m.marker,
                           sum(m.marker % c_marker_demand) over (order by m.marker) as demand_through
                      from (select l.objid::bigint::integer as marker
                              from pg_locks l
                             where l.locktype = 'advisory'
                               and l.database = (select b.oid from pg_database b where b.datname = current_database())
                               and l.classid = v_kind::oid
                               and l.objsubid = 2
                               and l.mode = 'ShareLock'
                               and l.granted
                               and l.pid <> pg_backend_pid()) m
                     where not exists (select from docket_claim_deliveries d
                                        where d.ticket = m.marker / c_marker_demand)) q
             where q.demand_through <= c_combined_demand - p_demand;
            -- end statement
            -- Serve only the tickets whose served lock this call gets now
            -- (a waiter that gave up holds its own), then only those still
            -- without a delivery in a snapshot taken after the locks: a
            -- waiter that gave up and committed left its tombstone.
            -- statement markers_take
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where pg_try_advisory_xact_lock(v_served, w.marker / c_marker_demand);
            -- end statement
            -- statement markers_check
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where not exists (select from docket_claim_deliveries d
                                where d.ticket = w.marker / c_marker_demand);
            -- end statement
        end if;

        if v_markers is null then
            return query
                select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at,
                       row_number() over (order by c.visit_ordinal, c.outcome_ordinal nulls last)
                  from docket_tenant_fair_claim(p_now, p_cutoff, p_demand, p_max_attempts,
                                                p_preference, false) as c
                 where c.row_kind <> 'inspection';
            exit call;
        end if;

        v_waiting := (select sum(m % c_marker_demand)::integer from unnest(v_markers) as m);
        select array_agg(row(c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                             c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                             c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at)::docket_claim_outcome
                         order by c.visit_ordinal, c.outcome_ordinal nulls last)
          into v_outcomes
          from docket_tenant_fair_claim(p_now, p_cutoff, v_waiting + p_demand, p_max_attempts,
                                        p_preference, false) as c
         where c.row_kind <> 'inspection';
        v_outcomes := coalesce(v_outcomes, '{}');

        -- An engine error reaches only this caller; its waiters find no
        -- delivery and try again.
        if exists (select from unnest(v_outcomes) as o where o.row_kind = 'error') then
            v_waiting := 0;
        else
            -- Waiter i takes the outcomes numbered after the demands of the
            -- waiters before it, up to its own; the caller takes what is left.
            -- statement deliveries_write
            insert into docket_claim_deliveries (ticket, outcomes)
            select s.marker / c_marker_demand,
                   coalesce((select array_agg(v_outcomes[g.i] order by g.i)
                               from generate_subscripts(v_outcomes, 1) as g(i)
                              where g.i > s.demand_through - s.marker % c_marker_demand
                                and g.i <= s.demand_through), '{}')
              from (select w.marker,
                           sum(w.marker % c_marker_demand) over (order by w.ordinal) as demand_through
                      from unnest(v_markers) with ordinality as w(marker, ordinal)) s;
            -- end statement

            -- statement deliveries_expire
            delete from docket_claim_deliveries d
             where d.delivered_at <= clock_timestamp() - c_delivery_life;
            -- end statement
        end if;

        return query
            select (v_outcomes[g.i]).*, (g.i - v_waiting)::bigint
              from generate_subscripts(v_outcomes, 1) as g(i)
             where g.i > v_waiting
             order by g.i;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

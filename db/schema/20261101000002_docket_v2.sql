-- migrate:up

-- Schema V2: the TenantFair admission authority over V1's run table, and
-- what the run store keeps beside it: the policy with its serialized
-- cursor, one partition and one ring position per owner scope, the marker
-- and page indexes, the lifecycle triggers, the periodic schedules, the
-- combined-claim deliveries and the claim functions. A stopped V1 database
-- is upgraded in place (the backfill below); a fresh install applies V1 and
-- V2 together. Function bodies live once in db/functions; the blocks between
-- "include" and "end include" are copied from there by `make generate`, and
-- CI fails when they drift. db/schema.sql shows the result in one file.

-- The singleton policy: engine mode, persisted default cap and the durable
-- scan cursor that every poller of this fairness domain serializes on.
-- park_dormant is what every poller walks by, configured_park_dormant the
-- value last synchronized from application configuration (so a runtime
-- change survives restarts with unchanged configuration).
create table docket_claim_policy (
    id smallint not null default 1 constraint docket_claim_policy_pkey primary key,
    admission_mode text not null default 'legacy',
    max_active integer,
    configured_max_active integer,
    policy_version bigint not null default 0,
    scan_ring_position bigint not null default 0,
    initialized_at timestamptz,
    updated_at timestamptz not null default now(),
    park_dormant boolean not null default false,
    configured_park_dormant boolean not null default false,
    constraint docket_claim_policy_singleton_check check (id = 1),
    constraint docket_claim_policy_mode_check
        check (admission_mode in ('legacy', 'tenant_fair')),
    constraint docket_claim_policy_max_active_check check (max_active >= 1),
    constraint docket_claim_policy_configured_check check (configured_max_active >= 1),
    constraint docket_claim_policy_version_check check (policy_version >= 0),
    constraint docket_claim_policy_cursor_check check (scan_ring_position >= 0),
    -- Uninitialized means no cap, no configured cap, version 0 and no
    -- initialization time; initialized means a cap and an initialization time.
    constraint docket_claim_policy_shape_check
        check ((initialized_at is null) = (max_active is null)
               and (initialized_at is not null
                    or (configured_max_active is null and policy_version = 0)))
);

insert into docket_claim_policy (id) values (1);

-- One admission authority per owner scope: the optional cap override, the
-- outcome-backed service epoch and an operator's pause (the TenantFair walk
-- still visits a paused partition and refuses it; its runs keep their
-- order until it is resumed).
create table docket_claim_partitions (
    scope_key text not null constraint docket_claim_partitions_pkey primary key,
    max_active integer,
    partition_version bigint not null default 0,
    admission_epoch bigint not null default 0,
    inserted_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    paused boolean not null default false,
    constraint docket_claim_partitions_max_active_check check (max_active >= 1),
    constraint docket_claim_partitions_version_check check (partition_version >= 0),
    constraint docket_claim_partitions_epoch_check check (admission_epoch >= 0)
);

-- The paused partitions, which the engine's class probes step over: few
-- partitions are ever paused, so the index stays tiny.
create index docket_claim_partitions_paused_idx on docket_claim_partitions (scope_key)
    where paused;

-- The unfinished ring: an immutable position per partition and the exact
-- count of its running and waiting runs. Zero-count rows stay to keep their
-- position. parked_until is NULL while awake; a time parks the partition
-- until then ('infinity': until a write). in_ring is the count's sign: it
-- changes only when a scope joins or leaves the ring, so the other updates
-- of the count are heap-only (no index names the count itself).
create table docket_claim_schedule (
    scope_key text not null constraint docket_claim_schedule_pkey primary key
        constraint docket_claim_schedule_scope_fkey
            references docket_claim_partitions (scope_key) on delete cascade,
    ring_position bigint generated always as identity
        constraint docket_claim_schedule_ring_position_key unique,
    unfinished_count bigint not null default 0,
    inserted_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    parked_until timestamptz,
    in_ring boolean not null generated always as (unfinished_count > 0) stored,
    constraint docket_claim_schedule_position_check check (ring_position > 0),
    constraint docket_claim_schedule_unfinished_check check (unfinished_count >= 0)
);

-- The ring proper: exactly the positions that own unfinished work.
create index docket_claim_schedule_ring_idx on docket_claim_schedule (ring_position)
    where in_ring;

-- The awake ring that a parked-mode call walks.
create index docket_claim_schedule_awake_idx on docket_claim_schedule (ring_position)
    where in_ring and parked_until is null;

-- The wake sweep: parked partitions by the time they are due to wake.
create index docket_claim_schedule_wake_idx on docket_claim_schedule (parked_until)
    where parked_until is not null;

-- include docket_claim_partitions_schedule_v1.sql
-- Gives every new owner partition its ring position in the same statement, so
-- no partition can exist without a place in the rotation.
create function docket_claim_partitions_schedule() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    insert into docket_claim_schedule (scope_key) values (new.scope_key);
    return null;
end;
$$;
-- end include

create trigger docket_claim_partitions_schedule_trg
    after insert on docket_claim_partitions
    for each row execute function docket_claim_partitions_schedule();

-- Backfill: every existing scope gets its partition, in first-run order, and
-- its exact unfinished count. This runs before the counter guards exist.
insert into docket_claim_partitions (scope_key)
select r.scope_key from docket_runs r group by r.scope_key order by min(r.id);

update docket_claim_schedule s
   set unfinished_count = c.unfinished
  from (select r.scope_key, count(*) as unfinished
          from docket_runs r
         where r.status in ('running', 'waiting')
         group by r.scope_key) c
 where s.scope_key = c.scope_key;

-- The sticky admission marker. Only a healthy running row can hold one.
alter table docket_runs
    add column tenant_admitted_at timestamptz,
    add constraint docket_runs_admission_check
        check (tenant_admitted_at is null or (status = 'running' and poisoned_at is null));

-- A stopped upgrade keeps every live claim as an admission, so no holder loses
-- its slot; a tenant that ends up over its cap carries debt, never a trim.
update docket_runs
   set tenant_admitted_at = claimed_at
 where status = 'running' and poisoned_at is null and claim_token is not null;

-- The handler-attempt counter and the bounded error history of a run, both
-- written only by the fenced commit that ends a handler attempt, in the same
-- UPDATE as the verdict. attempt counts the handler attempts that ended in a
-- retry or failure verdict since the run's last Complete, Continue or
-- WaitExternal verdict (or its insertion, or an operator's retry). errors
-- keeps the newest failures of those attempts, oldest first, and the entry
-- an operator's retry writes (kind "retry"); the 20-entry bound keeps the
-- row small, and each entry's text is cut to 2,000 bytes by the writer.
alter table docket_runs
    add column attempt integer not null default 0,
    add column errors jsonb not null default '[]',
    add constraint docket_runs_attempt_check check (attempt >= 0),
    add constraint docket_runs_errors_array_check check (jsonb_typeof(errors) = 'array'),
    -- The case keeps a non-array to the array check's error instead of a
    -- jsonb_array_length failure.
    add constraint docket_runs_errors_bound_check
        check (case when jsonb_typeof(errors) = 'array' then jsonb_array_length(errors) <= 20 else true end),
    add constraint docket_runs_errors_entry_check
        check (not jsonb_path_exists(errors,
            '$[*] ? (@.type() != "object"
                     || !(@.attempt.type() == "number") || @.attempt < 1
                     || !(@.at.type() == "string")
                     || !(@.error.type() == "string")
                     || !(@.kind == "error" || @.kind == "panic"
                          || @.kind == "no_result" || @.kind == "invalid_result"
                          || @.kind == "retry"))'));

-- The W3C trace context of the span that inserted the run, if any.
alter table docket_runs
    add column trace_context jsonb
        constraint docket_runs_trace_context_check
            check (trace_context is null or jsonb_typeof(trace_context) = 'object');

-- Admitted-ready page: sticky admissions that are due and unclaimed.
create index docket_runs_admitted_ready_idx on docket_runs (scope_key, wake_at, id)
    where status = 'running' and poisoned_at is null and claim_token is null
      and tenant_admitted_at is not null;

-- Queued-ready page: the FIFO of unadmitted due work per scope.
create index docket_runs_queued_ready_idx on docket_runs (scope_key, wake_at, id)
    where status = 'running' and poisoned_at is null and claim_token is null
      and tenant_admitted_at is null;

-- Expired page: admitted claims by claim age per scope.
create index docket_runs_admitted_claimed_idx on docket_runs (scope_key, claimed_at, id)
    where status = 'running' and poisoned_at is null and claim_token is not null
      and tenant_admitted_at is not null;

-- A park needs to know that a scope has no claimed row at all. Under
-- TenantFair every claim is admitted (admitted-claimed index); an unadmitted
-- claim only exists when plain SQL wrote one, so this index is normally empty.
create index docket_runs_unadmitted_claimed_idx on docket_runs (scope_key)
    where status = 'running' and poisoned_at is null and claim_token is not null
      and tenant_admitted_at is null;

-- The retention batch's predicate and order, so each batch reads its rows
-- in index order and stops at the batch size.
create index docket_runs_finished_idx on docket_runs (finished_at, id)
    where status in ('done', 'failed', 'cancelled');

-- Periodic runs. A schedule belongs to a scope exactly as a run does and
-- inserts ordinary runs through the normal admission path; nothing of the
-- claim engine or the ring reads this table. A tick is taken by one
-- transaction that locks the due row, inserts the tick's run and advances
-- next_tick_at, so the row itself is the only coordination between Workers.
create table docket_schedules (
    id bigserial constraint docket_schedules_pkey primary key,
    tenant_id text,
    -- The owner scope, keyed like docket_runs: tenantless schedules share
    -- the empty scope.
    scope_key text generated always as (coalesce(tenant_id, '')) stored,
    name text not null,
    graph_id text not null,
    graph_hash text not null,
    state jsonb not null,
    cron_expr text,
    interval_seconds bigint,
    -- Only cron reads the zone; it is validated by the application, which
    -- owns the zone database that computes the ticks.
    time_zone text not null default 'UTC',
    missed_ticks text not null default 'skip',
    paused boolean not null default false,
    paused_at timestamptz,
    next_tick_at timestamptz not null,
    last_tick_at timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    -- Counts operator edits for compare-and-set; taking a tick leaves it, so
    -- a busy schedule never makes an operator's expected version stale.
    version bigint not null default 1,
    constraint docket_schedules_scope_name_key unique (scope_key, name),
    constraint docket_schedules_tenant_id_check
        check (tenant_id is null or tenant_id <> ''),
    constraint docket_schedules_name_check check (name <> ''),
    constraint docket_schedules_cadence_check
        check ((cron_expr is null) <> (interval_seconds is null)),
    constraint docket_schedules_interval_check
        check (interval_seconds is null or interval_seconds >= 1),
    constraint docket_schedules_time_zone_check check (time_zone <> ''),
    constraint docket_schedules_missed_ticks_check
        check (missed_ticks in ('skip', 'all')),
    constraint docket_schedules_paused_check
        check (paused = (paused_at is not null)),
    constraint docket_schedules_version_check check (version >= 1)
);

-- The tick taker's scan: due schedules by next tick, paused ones left out,
-- so a paused schedule costs a taker nothing.
create index docket_schedules_due_idx on docket_schedules (next_tick_at, id)
    where not paused;

-- A candidate the TenantFair engine has frozen and may lock.
create type docket_claim_pending as (
    id bigint,
    kind text,
    poison boolean,
    eligible timestamptz,
    visit integer,
    cursor_before bigint,
    ring_position bigint,
    scope_key text
);

-- One outcome row of a claim call as a combined call stores it for a
-- waiter: the public columns of the engine's outcome rows, in their order.
create type docket_claim_outcome as (
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
    eligible_at timestamptz
);

-- Combined claims (docs/claim-algorithm.md, "Combined claims"). Tickets
-- name a waiting caller's marker and its delivery. The marker's key holds
-- ticket * 256 + demand in an integer, hence the bound; a ticket comes round
-- again only after 8,388,607 more waits, long after its delivery was
-- collected or expired.
create sequence docket_claim_tickets as integer minvalue 1 maxvalue 8388607 cycle;

-- The ticket sequence's value at the combiner's last read of the waiters'
-- markers (pg_locks is read only when a ticket was taken since). Like the
-- ticket sequence it is outside transactions.
create sequence docket_claim_tickets_read as integer minvalue 0 maxvalue 8388607 start 0;

-- The outcomes a combiner leased or poisoned for one waiting caller. A row
-- lives from the combiner's commit until its caller wakes and collects it, a
-- few milliseconds; a row left by a caller that is gone is deleted by a
-- later combiner.
create table docket_claim_deliveries (
    ticket integer
        constraint docket_claim_deliveries_pkey primary key
        constraint docket_claim_deliveries_ticket_check check (ticket > 0),
    delivered_at timestamptz not null default clock_timestamp(),
    outcomes docket_claim_outcome[] not null
);

-- include docket_claim_partitions_guard_v1.sql
-- Partitions are the admission authority of a scope: their key never changes,
-- and one that still owns runs cannot disappear, or its nonterminal work would
-- silently leave the ring.
create function docket_claim_partitions_guard() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if tg_op = 'UPDATE' then
        if new.scope_key is distinct from old.scope_key then
            raise exception 'docket: the scope_key of a claim partition is immutable'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if exists (select 1 from docket_runs r where r.scope_key = old.scope_key) then
        raise exception 'docket: claim partition % still owns runs', quote_literal(old.scope_key)
            using errcode = 'integrity_constraint_violation';
    end if;
    return old;
end;
$$;
-- end include

-- include docket_claim_schedule_guard_v1.sql
-- The ring is authoritative, not a cache: its counter is written only by the
-- run lifecycle triggers (which run one trigger level deeper than any client
-- statement), positions are immutable, and a row that still counts unfinished
-- work cannot be removed. There is deliberately no reconciliation path.
create function docket_claim_schedule_guard() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if tg_op = 'INSERT' then
        if pg_trigger_depth() < 2 or new.unfinished_count <> 0 then
            raise exception 'docket: schedule rows are created only by their claim partition'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if tg_op = 'DELETE' then
        if old.unfinished_count > 0 then
            raise exception 'docket: schedule row % still counts % unfinished runs',
                    quote_literal(old.scope_key), old.unfinished_count
                using errcode = 'integrity_constraint_violation';
        end if;
        return old;
    end if;

    if new.scope_key is distinct from old.scope_key
            or new.ring_position is distinct from old.ring_position then
        raise exception 'docket: schedule scope and ring position are immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    if new.unfinished_count is distinct from old.unfinished_count then
        if pg_trigger_depth() < 2 then
            raise exception 'docket: unfinished_count is maintained by triggers only'
                using errcode = 'integrity_constraint_violation';
        end if;
        if new.unfinished_count < 0 then
            raise exception 'docket: unfinished_count underflow for scope %', quote_literal(old.scope_key)
                using errcode = 'integrity_constraint_violation';
        end if;
    end if;
    return new;
end;
$$;
-- end include

-- include docket_runs_track_insert_v1.sql
-- Creates the owner partition of every new run inside the inserting statement
-- and adds the new unfinished runs to the ring counter. Running once per
-- statement keeps bulk enqueues to one counter write per scope. Partitions are
-- created in key order so concurrent multi-tenant inserts lock alike.
--
-- The same counter write wakes a parked partition (wake by write): a new run
-- that is claimed or due now unparks it, and a new run due later parks it no
-- later than that run's wake_at. The write is unconditional, so a claim call
-- parking the partition concurrently either sees the new run, finds this
-- row locked and leaves the partition awake, or is followed by this write.
--
-- It also parks on write: in a TenantFair domain with park_dormant on, a
-- partition that had no unfinished run and receives only runs that are not
-- due (later, or waiting) is dormant, and is parked here until the earliest
-- wake_at of its new healthy unclaimed running runs, else for good. The
-- counter says the partition held nothing, so no probe of docket_runs is
-- needed; without this, every such partition would wait for a walk to visit
-- it once before it leaves the awake ring.
create or replace function docket_runs_track_insert() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
declare
    v_park boolean;
begin
    insert into docket_claim_partitions (scope_key)
    select distinct c.scope_key from docket_created_runs c order by c.scope_key
    on conflict (scope_key) do nothing;

    -- Lock the counters in scope order first, the order in which the
    -- worker's batch commit takes them, so that two writers touching the
    -- same scopes wait for each other instead of deadlocking; the update
    -- below would take them in whatever order its join produces.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select c.scope_key from docket_created_runs c
                             where c.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    -- Read after the counter locks, in a snapshot of its own: a concurrent
    -- switch of parking or of the engine that committed before this point
    -- is seen here (docs/fairness-parked.md, the races each rule closes).
    v_park := exists (select from docket_claim_policy p
                       where p.id = 1 and p.admission_mode = 'tenant_fair' and p.park_dormant);

    -- least ignores nulls: a scope whose new runs are all waiting or
    -- poisoned keeps its parked_until. The counter read here is the one this
    -- transaction locked, so "was zero" cannot be overtaken by a concurrent
    -- insert, status change or delete of the same scope: each of those
    -- writes this row and waits for the lock. A paused partition is left
    -- awake, as the walk leaves it, so every visit refuses it.
    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           parked_until = case
               when d.awake then null
               when v_park and s.unfinished_count = 0
                    and not exists (select from docket_claim_partitions pa
                                     where pa.scope_key = s.scope_key and pa.paused)
                   then coalesce(d.next_wake, 'infinity')
               when s.parked_until is null then null
               else least(s.parked_until, d.next_wake) end,
           updated_at = now()
      from (select c.scope_key, count(*) as created,
                   coalesce(bool_or(docket_run_healthy(c)
                                    and (c.claim_token is not null or c.wake_at <= now())), false) as awake,
                   min(c.wake_at) filter (where docket_run_unclaimed(c)) as next_wake
              from docket_created_runs c
             where c.status in ('running', 'waiting')
             group by c.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
-- end include

-- include docket_runs_track_delete_v1.sql
-- Removes deleted unfinished runs from the ring counter, once per statement.
create function docket_runs_track_delete() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    -- Counters are locked in scope order first, as in
    -- docket_runs_track_insert, so concurrent writers cannot deadlock.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select r.scope_key from docket_deleted_runs r
                             where r.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count - d.removed,
           updated_at = now()
      from (select r.scope_key, count(*) as removed
              from docket_deleted_runs r
             where r.status in ('running', 'waiting')
             group by r.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
-- end include

-- include docket_runs_track_status_v1.sql
-- Moves one run into or out of the unfinished count when its status crosses
-- the running/waiting versus terminal boundary. The trigger's WHEN clause
-- keeps ordinary claim traffic, which never crosses it, off this path.
create function docket_runs_track_status() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    update docket_claim_schedule
       set unfinished_count = unfinished_count
               + case when new.status in ('running', 'waiting') then 1 else -1 end,
           updated_at = now()
     where scope_key = new.scope_key;
    return null;
end;
$$;
-- end include

-- include docket_runs_guard_scope_v1.sql
-- A run never changes owner: moving it would desynchronize two ring counters
-- and could carry an admission marker into a scope that never granted it.
create function docket_runs_guard_scope() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if new.tenant_id is distinct from old.tenant_id then
        raise exception 'docket: the tenant of a run is immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    return new;
end;
$$;
-- end include

-- include docket_guard_truncate_v1.sql
-- TRUNCATE fires no row triggers, so it would bypass the ring counter; it is
-- refused on every table the counter depends on.
create function docket_guard_truncate() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    raise exception 'docket: TRUNCATE of % is refused; delete rows instead', tg_table_name
        using errcode = 'integrity_constraint_violation';
end;
$$;
-- end include

-- include docket_runs_wake_partition_v1.sql
-- Wake by write for updates: a run that becomes healthy, unclaimed and
-- running, or such a run whose wake_at changes (a resume, a retried poison,
-- a moved timer), may make its parked partition eligible. The trigger's WHEN
-- clause selects exactly those updates; a claim release needs nothing, since
-- a partition with a claimed row never parks, and claim traffic (leases and
-- poisons) never fires it, so the claim engine never waits on a schedule row.
--
-- The schedule row is written unconditionally, never only "where
-- parked_until is not null": that filter would read a snapshot that can miss
-- a park committed after it, while an unconditional update waits for the
-- parking call and then applies to the row it parked. A run due at the write
-- unparks the partition; one due later parks it no later than its wake_at.
create function docket_runs_wake_partition() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    update docket_claim_schedule s
       set parked_until = case
               when s.parked_until is null or new.wake_at <= now() then null
               else least(s.parked_until, new.wake_at) end
     where s.scope_key = new.scope_key;
    return null;
end;
$$;
-- end include

create trigger docket_claim_partitions_guard_trg
    before update of scope_key or delete on docket_claim_partitions
    for each row execute function docket_claim_partitions_guard();

create trigger docket_claim_schedule_guard_trg
    before insert or update of scope_key, ring_position, unfinished_count or delete
    on docket_claim_schedule
    for each row execute function docket_claim_schedule_guard();

create trigger docket_runs_track_insert_trg
    after insert on docket_runs
    referencing new table as docket_created_runs
    for each statement execute function docket_runs_track_insert();

create trigger docket_runs_track_delete_trg
    after delete on docket_runs
    referencing old table as docket_deleted_runs
    for each statement execute function docket_runs_track_delete();

create trigger docket_runs_track_status_trg
    after update of status on docket_runs
    for each row
    when ((old.status in ('running', 'waiting')) is distinct from (new.status in ('running', 'waiting')))
    execute function docket_runs_track_status();

create trigger docket_runs_guard_scope_trg
    before update of tenant_id on docket_runs
    for each row execute function docket_runs_guard_scope();

create trigger docket_runs_guard_truncate_trg
    before truncate on docket_runs
    for each statement execute function docket_guard_truncate();

create trigger docket_claim_schedule_guard_truncate_trg
    before truncate on docket_claim_schedule
    for each statement execute function docket_guard_truncate();

create trigger docket_claim_partitions_guard_truncate_trg
    before truncate on docket_claim_partitions
    for each statement execute function docket_guard_truncate();

-- A run that becomes due wakes its parked partition.
create trigger docket_runs_wake_partition_trg
    after update on docket_runs
    for each row
    when (new.status = 'running' and new.poisoned_at is null and new.claim_token is null
          and (old.status <> 'running' or old.poisoned_at is not null
               or (old.claim_token is null and old.wake_at is distinct from new.wake_at)))
    execute function docket_runs_wake_partition();

-- The derived run states, one definition each, which every statement and
-- function that reads runs calls.
-- include docket_run_healthy_v1.sql
-- A healthy run: running and not poisoned, so a claim call may lease it,
-- poison it or count its admission. The other derived run states
-- (docket_run_*) build on it.
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_healthy(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null
$$;
-- end include

-- include docket_run_unclaimed_v1.sql
-- A healthy run that no holder claims (ready once its wake_at is due).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_healthy(r) and r.claim_token is null
$$;
-- end include

-- include docket_run_claimed_v1.sql
-- A healthy run a holder claims (expired once its claimed_at is older than
-- the caller's cutoff).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_healthy(r) and r.claim_token is not null
$$;
-- end include

-- include docket_run_marked_unclaimed_v1.sql
-- An unclaimed run with an admission marker: the admitted-ready page once due
-- (docket_runs_admitted_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_marked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_unclaimed(r) and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_unmarked_unclaimed_v1.sql
-- An unclaimed run without an admission marker: its tenant's FIFO, the
-- queued-ready page once due (docket_runs_queued_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unmarked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_unclaimed(r) and r.tenant_admitted_at is null
$$;
-- end include

-- include docket_run_marked_claimed_v1.sql
-- A claimed run with an admission marker: the expired page once its claim is
-- older than the cutoff (docket_runs_admitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_marked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_claimed(r) and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_unmarked_claimed_v1.sql
-- A claimed run without an admission marker: a Legacy claim, or one a switch
-- of engine has not marked yet (docket_runs_unadmitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unmarked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_claimed(r) and r.tenant_admitted_at is null
$$;
-- end include

-- include docket_run_admitted_v1.sql
-- A run that holds its tenant's admission marker, claimed or not: one of the
-- admitted runs a tenant's cap counts. It is the union of the two admitted
-- pages' states, so a statement that asks for it reads the two partial
-- indexes whose predicates they are (docket_runs_admitted_ready_idx and
-- docket_runs_admitted_claimed_idx) and no index of its own.
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_admitted(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_marked_unclaimed(r) or docket_run_marked_claimed(r)
$$;
-- end include

-- include docket_run_phase_v1.sql
create or replace function docket_run_phase(r docket_runs, observed_at timestamptz)
    returns text
    language plpgsql
    stable
    parallel safe
    set search_path from current
as $$
-- The one definition of a run's phase, read by every query that shows or
-- filters runs. The order of the branches is the precedence: a terminal
-- status first, then the external wait, the poison facts, a held claim,
-- and for an unclaimed running run whether its tenant is paused, when it
-- is due and whether its tenant admitted it. Beyond its arguments it reads
-- the run's partition and the policy row, both by primary key.
begin
return case
    when r.status in ('done', 'failed', 'cancelled') then r.status
    when r.status = 'waiting' then 'waiting'
    when r.poisoned_at is not null then 'poisoned'
    when r.claim_token is not null then 'executing'
    -- A paused tenant's unclaimed runs wait for its resume. Only TenantFair
    -- honours the pause; under Legacy they are claimed as usual.
    when exists (select from docket_claim_partitions p where p.scope_key = r.scope_key and p.paused)
         and exists (select from docket_claim_policy pol where pol.id = 1 and pol.admission_mode = 'tenant_fair')
        then 'paused'
    -- Not due, and the last write was a failed attempt: the verdict commit
    -- appends the error entry and sets updated_at in one statement, so the
    -- newest entry's time equals updated_at exactly when nothing wrote the
    -- run since. An operator's retry entry is not a failed attempt.
    when r.wake_at > observed_at
         and jsonb_array_length(r.errors) > 0
         and r.errors -> -1 ->> 'kind' <> 'retry'
         and (r.errors -> -1 ->> 'at')::timestamptz = r.updated_at then 'retrying'
    when r.wake_at > observed_at then 'scheduled'
    when r.tenant_admitted_at is not null then 'ready'
    else 'queued'
end;
end
$$;
-- end include

-- include docket_commit_runs_v1.sql
-- The Worker's verdicts, many holders' commits in one statement: element i
-- of the arrays is one holder's commit, fenced like CommitRun on its exact
-- claim token and expected checkpoint_seq, with its own schedule and the
-- same column writes. Each result row names its commit by claim token; a
-- commit whose fence fails matches no row and is absent from the result,
-- and the others still commit. Claim tokens travel as text. An empty string
-- stands for a NULL state, checkpoint type or error kind; wake_at is read
-- only by the 'at' schedule and wake_delay_us only by 'after'. Parallel
-- unnests zip the arrays. The prior CTE locks the fenced rows in
-- (scope_key, id) order, so the status trigger's counter writes of two
-- concurrent batches take their scopes' locks in the same order;
-- marker_cleared compares the marker this statement replaced with the one
-- it wrote, as in CommitRun.
--
-- It is a function, not a statement the client prepares, for its plan. A
-- prepared statement whose arrays arrive as parameters is planned afresh on
-- every execution: the planner counts a bound array's elements, so a plan
-- for the one or two commits a Worker usually sends always looks cheaper
-- than the generic plan, which assumes ten, and planning this statement cost
-- more than running it. Here the one plan is kept for the session.
create or replace function docket_commit_runs(
    p_scope_keys text[],
    p_run_ids text[],
    p_claim_tokens text[],
    p_expected_seqs bigint[],
    p_steps integer[],
    p_states text[],
    p_checkpoint_types text[],
    p_statuses text[],
    p_schedules text[],
    p_wake_ats timestamptz[],
    p_wake_delays_us bigint[],
    p_attempt_changes text[],
    p_error_kinds text[],
    p_error_texts text[]
) returns table (
    claim_token uuid,
    checkpoint_seq bigint,
    step integer,
    marker_cleared boolean
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The right plan does not depend on how many commits a call carries.
    set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    return query
    -- statement commit
    with batch as (
        select unnest(p_scope_keys) as scope_key,
               unnest(p_run_ids) as run_id,
               unnest(p_claim_tokens)::uuid as claim_token,
               unnest(p_expected_seqs) as expected_seq,
               unnest(p_steps) as step,
               unnest(p_states) as state,
               unnest(p_checkpoint_types) as checkpoint_type,
               unnest(p_statuses) as status,
               unnest(p_schedules) as schedule,
               unnest(p_wake_ats) as wake_at,
               unnest(p_wake_delays_us) as wake_delay_us,
               unnest(p_attempt_changes) as attempt_change,
               unnest(p_error_kinds) as error_kind,
               unnest(p_error_texts) as error_text
    ), prior as materialized (
        select r.id, r.tenant_admitted_at, b.claim_token, b.expected_seq, b.step,
               nullif(b.state, '') as state, nullif(b.checkpoint_type, '') as checkpoint_type,
               b.status, b.schedule, b.wake_at, b.wake_delay_us, b.attempt_change,
               nullif(b.error_kind, '') as error_kind, b.error_text
          from batch b
          join docket_runs r on r.scope_key = b.scope_key and r.run_id = b.run_id
         where r.claim_token = b.claim_token and r.checkpoint_seq = b.expected_seq
         order by r.scope_key, r.id
           for no key update of r
    )
    update docket_runs r
       set checkpoint_seq = r.checkpoint_seq + 1,
           state = coalesce(p.state::jsonb, r.state),
           step = p.step,
           latest_checkpoint_type = p.checkpoint_type,
           status = p.status,
           claim_token = case when p.schedule = 'retain' then r.claim_token end,
           claimed_at = case when p.schedule = 'retain' then greatest(r.claimed_at, now()) end,
           wake_at = case p.schedule
                         when 'immediate' then now()
                         when 'at' then p.wake_at
                         when 'after' then now() + interval '1 microsecond' * p.wake_delay_us
                     end,
           tenant_admitted_at = case when p.schedule in ('retain', 'immediate')
                                     then r.tenant_admitted_at end,
           finished_at = case when p.schedule = 'terminal' then now() end,
           claim_attempts = 0,
           claim_abandons = 0,
           attempt = case p.attempt_change
                         when 'count' then least(r.attempt::bigint + 1, 2147483647)::integer
                         when 'keep' then r.attempt
                         else 0
                     end,
           errors = case when p.error_kind is null then r.errors
                         else (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                              || jsonb_build_array(jsonb_build_object(
                                     'attempt', least(r.attempt::bigint + 1, 2147483647),
                                     'at', now(),
                                     'kind', p.error_kind,
                                     'error', p.error_text))
                     end,
           updated_at = now()
      from prior p
     where r.id = p.id
       and r.claim_token = p.claim_token
       and r.checkpoint_seq = p.expected_seq
    returning p.claim_token, r.checkpoint_seq, r.step,
              (p.tenant_admitted_at is not null and r.tenant_admitted_at is null);
    -- end statement
end
$$;
-- end include

-- The claim engines.
-- include docket_claim_precheck_v1.sql
-- The preamble both claim engines share, so that neither can accept a call
-- the other would refuse: the argument checks, the transaction contract and
-- the lock wait cap. p_engine is the calling engine's name, which starts
-- every error message as it did when each engine checked for itself.
--
-- A bad argument raises SQLSTATE 22023 (nothing has changed yet). A refused
-- transaction is returned as o_error_reason, the engine's error row. Else the
-- lock wait is capped at 250 ms unless the caller already waits less; the
-- cap is a transaction-local setting that outlives this function (only
-- settings named in a function's SET clauses are restored at its exit), and
-- o_restore_lock_timeout is the caller's value for the engine to restore
-- before it returns, null when it was kept.
create or replace function docket_claim_precheck(
    p_engine text,
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean,
    out o_error_reason text,
    out o_restore_lock_timeout text
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
as $$
declare
    c_lock_wait_ms constant numeric := 250;

    v_caller_lock_timeout text;
begin
    if p_now is null or p_cutoff is null or p_demand is null or p_max_attempts is null
            or p_trace is null then
        raise exception '%: arguments other than p_preference must not be null', p_engine
            using errcode = 'invalid_parameter_value';
    end if;
    if p_demand <= 0 or p_max_attempts <= 0 then
        raise exception '%: demand % and max attempts % must be positive',
                p_engine, p_demand, p_max_attempts
            using errcode = 'invalid_parameter_value';
    end if;
    if p_cutoff > p_now then
        raise exception '%: cutoff % is after now %', p_engine, p_cutoff, p_now
            using errcode = 'invalid_parameter_value';
    end if;
    if p_preference is not null and p_preference not in ('ready', 'expired') then
        raise exception '%: preference % is neither ready nor expired',
                p_engine, quote_literal(p_preference)
            using errcode = 'invalid_parameter_value';
    end if;

    -- Admission needs a writable Read Committed transaction: only then does
    -- every statement of an engine see a fresh snapshot after the lock it
    -- follows.
    if current_setting('transaction_read_only') = 'on' then
        o_error_reason := 'read_only_transaction';
        return;
    elsif current_setting('transaction_isolation') <> 'read committed' then
        o_error_reason := 'unsupported_isolation';
        return;
    end if;

    v_caller_lock_timeout := current_setting('lock_timeout');
    if extract(epoch from v_caller_lock_timeout::interval) * 1000 not between 1 and c_lock_wait_ms then
        perform set_config('lock_timeout', c_lock_wait_ms || 'ms', true);
        o_restore_lock_timeout := v_caller_lock_timeout;
    end if;
end;
$$;
-- end include

-- include docket_tenant_fair_claim_v1.sql
-- The TenantFair admission engine, the only way a run of this fairness domain
-- is admitted or leased while admission_mode is 'tenant_fair'.
--
-- One call serializes on the singleton policy row (the durable scan cursor),
-- then visits up to 32 positions of the unfinished ring in cursor order. Each
-- visit tries its partition authority without waiting, freezes at most 16
-- candidate run ids, locks exactly those without waiting, rechecks them
-- against the live rows and chooses at most 8 outcomes as one grant. The
-- budgets are the specification's S = 32, Q = 8 and K = 16; they are repeated
-- in policy/budgets.go.
--
-- The outcomes of every grant are written by one statement at the end of the
-- call, with the grants' epochs and the cursor: a chosen row is locked by the
-- call and cannot change before then, and a write per call instead of one per
-- grant saves most of a grant's fixed cost. A wrap back to a partition that
-- still has unwritten outcomes writes them first, so that visit sees them.
--
-- Production reads only 'outcome' and 'error' rows; p_trace adds one
-- identity-bearing 'inspection' row per visit for trusted inspection.
--
-- Parked partitions (opt-in, docket_claim_policy.park_dormant): a visit
-- whose partition is dormant (no claimed running row, no healthy unclaimed
-- running row due at p_now) parks it until its earliest wake_at, and the walk
-- then visits only the awake ring (in_ring and parked_until is null). Each
-- call first unparks at most 64 partitions whose parked_until has come,
-- earliest first; the run lifecycle triggers unpark a partition when a write
-- can make one of its rows eligible. With park_dormant off the call is
-- exactly the specification's walk: it neither parks, sweeps nor reads
-- parked_until.
--
-- In parked mode an inspection row reports the park in columns that are null
-- on inspection rows otherwise: outcome_ordinal is 0 when the visit parked its
-- partition (the disposition stays empty_page), eligible_at is then the time
-- it is parked until (null when nothing of it is scheduled), and
-- claim_attempt is the number of partitions this call's wake sweep unparked.
--
-- The full-ring walk steps one position at a time while its visits grant,
-- as parked mode does: one keyset statement finds the next position, whose
-- partition lock statement probes its pages. From the first visit without
-- an outcome on, it discovers its positions a window at a time: one
-- statement reads the next distinct ring positions after the cursor with a
-- probe of each one's three pages, and a run of consecutive positions whose
-- probes found nothing is locked by one statement and inspected without
-- further SQL. A position whose probe found work is visited as one statement
-- for its partition lock and one for its candidates. On a ring where most
-- positions have work a call ends within a few granting visits, and a step
-- costs less than a window; where visits find nothing, the window saves a
-- statement per empty position. The visits, their order, dispositions,
-- grants and cursor are those of a walk that steps and locks one position
-- at a time; only fewer statements run (docs/claim-algorithm.md, the call
-- step by step).
--
-- A paused partition (docket_claim_partitions.paused, an operator's stop)
-- is still visited in ring order, in both walks: its visit takes the
-- partition lock and ends there with the disposition 'paused', granting and
-- leasing nothing and reading none of its pages, so its queued and ready
-- runs keep their order for the resume. Holders of its claimed runs are not
-- affected: they commit as any holder does. A paused partition is never
-- parked, since the park would hide it from the walk that must refuse it.
-- Its work is no work for the class probes either, so it never keeps a
-- call's last slot for a class only it holds.
--
-- Every probe of a page reads the page's first entry in its index order
-- (ORDER BY the index's columns, LIMIT 1) rather than asking EXISTS, which
-- drops any ORDER BY. A session plans each statement once, on the data of
-- its first call, and keeps the plan. On a fresh backlog the admitted
-- indexes are empty, and to the planner another index over a page's rows
-- (until schema V22, one of every admitted row of a scope) then costs as
-- little as the page's own: an unordered probe planned then kept reading
-- every admitted row of the scope with a filter, on every visit, as the
-- scope's claims grew. The order makes the page's index the only one that
-- needs no sort.
--
-- The ring is the positions whose docket_claim_schedule.in_ring holds, a
-- column PostgreSQL keeps as unfinished_count > 0. The ring indexes' predicates
-- name in_ring rather than the count, so the count's update on every insert
-- and finish changes no indexed column unless the scope joins or leaves the
-- ring, and PostgreSQL writes it as a heap-only update without new index
-- entries; every statement that walks the ring names in_ring to reach them.
--
-- A scope's admitted count is the sum of its two admitted pages, the
-- unclaimed (admitted-ready, due or not) and the claimed: no index of its
-- own is kept for it, since every claim would write an entry there too.
--
-- Each SQL statement of the engine sits between a "-- statement NAME" and an
-- "-- end statement" line; the plan regression test reads them from this file.
create or replace function docket_tenant_fair_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
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
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_inspections constant integer := 32;
    c_grant_outcomes constant integer := 8;
    c_frozen constant integer := 16;
    -- A class whose head must be found freezes its first K / 4 rows ahead
    -- of the rest, so up to three rows held by other transactions can hand
    -- the head's place to the next; the other 8 frozen ids still cover the
    -- Q - 2 further outcomes the walk may take.
    c_class_reserve constant integer := 4;
    -- The first ring window of a call is this many positions, and never
    -- more than the demand left: a call that fills its demand within a few
    -- more visits probes few positions it never reaches, and a call over
    -- dormant positions reads the rest of its inspections as a second
    -- window.
    c_first_window constant integer := 4;
    -- The wake sweep unparks at most this many partitions per call: each is
    -- one schedule row update under the policy lock, so a call pays at most
    -- 64 extra row writes, and a burst of N simultaneous wakes is drained in
    -- ceil(N / 64) calls, earliest first.
    c_wake_batch constant integer := 64;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_default_cap integer;
    v_initialized_at timestamptz;
    v_park boolean;
    v_error text;
    v_woken integer;
    v_park_probe bigint;
    v_parked boolean;
    v_parked_until timestamptz;

    v_call_token uuid;
    v_xid bigint;
    v_cursor bigint;
    v_remaining integer := p_demand;
    v_visit integer := 0;
    -- An empty class counts as served, so it never withholds a slot.
    v_served_ready boolean := true;
    v_served_expired boolean := true;

    v_position bigint;
    v_scope text;
    -- The current ring window in visit order: its positions, their scopes
    -- and whether the window's probe found a page; the next entry to visit;
    -- the visited entry (null for a stepped visit); and the last entry of the
    -- empty run whose partitions are locked, with the scopes it locked.
    v_window integer;
    v_win_positions bigint[] := '{}';
    v_win_scopes text[] := '{}';
    v_win_pages boolean[] := '{}';
    v_win_next integer := 1;
    v_win_index integer;
    v_run_end integer := 0;
    v_run_scopes text[];
    v_run_locked text[];
    v_run_paused text[];
    v_cursor_before bigint;
    v_override integer;
    v_paused boolean;
    v_has_page boolean;
    v_cap integer;
    v_admitted bigint;
    v_limit integer;
    v_frozen integer;
    v_candidate record;
    v_class text;
    v_walk_served_ready boolean;
    v_walk_served_expired boolean;
    v_walk_remaining integer;
    v_queue_no integer;
    v_next_queue integer;
    v_lead boolean;
    v_lead_locked boolean;
    v_withheld boolean;
    v_no_slot boolean;
    v_take docket_claim_pending[];
    v_kept docket_claim_pending[];
    v_item docket_claim_pending;
    v_promote_ids bigint[];
    v_moved_ids bigint[];
    v_refused_ids bigint[];
    v_visit_outcomes integer;
    v_disposition text;

    -- Chosen but unwritten outcomes in call order, each with what its
    -- outcome row reports of its visit, and one scope entry per grant.
    v_pending docket_claim_pending[] := '{}';
    v_pending_grants text[] := '{}';
    v_written integer := 0;
    -- The full-ring walk steps until a visit ends without an outcome.
    v_stepping boolean := true;
begin
    -- The argument checks, the transaction contract and the lock wait cap,
    -- shared with Legacy.
    v_precheck := docket_claim_precheck('docket_tenant_fair_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A free policy row is taken without waiting, which keeps the
        -- uncontended call out of the subtransaction of an exception block;
        -- only a held row is waited for, within the lock wait the precheck
        -- set.
        -- statement policy_lock
        select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant
          into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park
          from docket_claim_policy p
         where p.id = 1
           for update skip locked;
        -- end statement
        v_policy_found := found;
        if not v_policy_found then
            begin
                -- statement policy_wait
                select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant
                  into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park
                  from docket_claim_policy p
                 where p.id = 1
                   for update;
                -- end statement
                v_policy_found := found;
            exception when lock_not_available then
                v_error := 'lock_contention';
            end;
        end if;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode = 'legacy' and v_initialized_at is null then
                v_error := 'not_initialized';
            elsif v_mode is distinct from 'tenant_fair' then
                v_error := 'inactive_engine';
            elsif v_default_cap is null or v_default_cap < 1 or v_initialized_at is null
                    or v_cursor is null or v_cursor < 0 or v_park is null then
                v_error := 'malformed_policy';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;

        -- Wake by time, before the walk so that this call already visits the
        -- partitions whose time has come. A row some writer holds is skipped
        -- rather than waited for (claim never waits on a schedule row) and
        -- stays due, so a later call unparks it, unless that writer wakes it
        -- itself (wake by write). Only claim calls park and
        -- sweep, and they serialize on the policy row, so no park can
        -- interleave with this statement.
        if v_park then
            -- statement wake_sweep
            with due as (
                select s.scope_key
                  from docket_claim_schedule s
                 where s.parked_until <= p_now
                 order by s.parked_until
                 limit c_wake_batch
                   for no key update skip locked
            )
            update docket_claim_schedule s
               set parked_until = null
             where s.scope_key = any (array(select d.scope_key from due d));
            -- end statement
            get diagnostics v_woken = row_count;
        end if;

        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        -- Work of a paused partition is no work here: no visit could serve
        -- it, so reserving a slot for it would only withhold one from the
        -- others. Entries of paused partitions at the head of the index are
        -- stepped over, each checked in docket_claim_partitions_paused_idx.
        -- The expired class is probed in two steps. The first reads the
        -- domain's oldest claim of all, in docket_runs_expired_idx, the one
        -- index whose predicate is the claimed state and whose order is the
        -- statement's, so it reads one entry whatever the statistics say
        -- (as Legacy's probe does): while no claim has
        -- expired, the common case, the class is empty and nothing else is
        -- read. Only when some claim has expired does the second step look
        -- for one that is admitted and outside a paused partition. A single
        -- statement asking that at once could also be served by the
        -- admitted indexes, and with statistics taken before the domain's
        -- claims piled up a generic plan chose one of them and filtered
        -- every live claim on each call.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                       and not exists (select from docket_claim_partitions pa
                                        where pa.scope_key = r.scope_key and pa.paused)
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
            if not v_served_expired then
                -- statement expired_probe
                select (select r.id from docket_runs r
                         where docket_run_marked_claimed(r)
                           and r.claimed_at < p_cutoff
                           and not exists (select from docket_claim_partitions pa
                                            where pa.scope_key = r.scope_key and pa.paused)
                         order by r.claimed_at, r.id
                         limit 1) is null
                  into v_served_expired;
                -- end statement
            end if;
        end if;

        -- Only trace rows identify the call; production rows leave it null.
        if p_trace then
            v_call_token := gen_random_uuid();
        end if;

        loop
            v_position := null;
            v_win_index := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row. Parked mode walks the awake ring
                -- through its own index, one keyset step past the
                -- call-local cursor at a time, wrapping to the smallest
                -- position.
                if v_park then
                    -- statement ring_step_awake
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.parked_until is null
                       and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap_awake
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring and s.parked_until is null
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                elsif v_stepping then
                    -- The full-ring walk's step: the same keyset step
                    -- through the whole ring.
                    -- statement ring_step
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                else
                    if v_win_next > cardinality(v_win_positions) then
                        -- The next window: the distinct ring positions that
                        -- the next steps reach, strictly after the cursor
                        -- and then wrapping once to the smallest position,
                        -- never more than the inspections left. Each comes
                        -- with the probe the partition lock statement makes
                        -- (one per page), taken in this statement's
                        -- snapshot; a wrap past the window reads a new one,
                        -- which may revisit positions.
                        v_window := least(c_inspections - v_visit,
                                          case when cardinality(v_win_positions) = 0
                                               then least(c_first_window, v_remaining)
                                               else c_inspections end);
                        -- statement ring_window
                        select coalesce(array_agg(w.pos order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.scope order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.has_page order by w.lap, w.pos), '{}')
                          into v_win_positions, v_win_scopes, v_win_pages
                          from (select n.pos, n.scope, n.lap,
                                       coalesce(ar.found or qr.found or ex.found, false) as has_page
                                  from ((select s.ring_position as pos, s.scope_key as scope, 0 as lap
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position > v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        union all
                                        (select s.ring_position, s.scope_key, 1
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position <= v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        order by lap, pos
                                        limit v_window) as n
                                  -- One probe per page and position, each a
                                  -- lateral join and not an EXISTS in the
                                  -- select list: PostgreSQL 13 plans such an
                                  -- EXISTS with a hashed alternative that
                                  -- reads every due run of the domain.
                                  -- docket_runs_admitted_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as ar on true
                                  -- docket_runs_queued_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as qr on true
                                  -- docket_runs_admitted_claimed_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                                                      order by r.claimed_at, r.id
                                                      limit 1) as ex on true) as w;
                        -- end statement
                        v_win_next := 1;
                        v_run_end := 0;
                    end if;
                    if v_win_next <= cardinality(v_win_positions) then
                        v_win_index := v_win_next;
                        v_win_next := v_win_next + 1;
                        v_position := v_win_positions[v_win_index];
                        v_scope := v_win_scopes[v_win_index];
                    end if;
                end if;
            end if;

            -- The chosen outcomes are written when the call ends, and before
            -- a wrap revisits a partition that still has unwritten ones.
            if v_position is null or v_scope = any (v_pending_grants) then
                if cardinality(v_pending) = 0 and v_position is null and v_visit > 0 then
                    -- A call without outcomes only moves the cursor; the
                    -- write below would open every index of docket_runs
                    -- for nothing.
                    -- statement cursor_move
                    update docket_claim_policy p
                       set scan_ring_position = v_cursor
                     where p.id = 1;
                    -- end statement
                elsif cardinality(v_pending) > 0 then
                    -- One set-based mutation of the chosen rows, the epoch
                    -- of each grant and, at the end, the cursor. Every row
                    -- is locked by this call and was rechecked, so each is
                    -- written. A batch holds at most one grant per
                    -- partition, because a revisit writes the batch first.
                    -- The rows carry their visit and call-wide outcome
                    -- ordinals; callers order by those, not by arrival.
                    return query
                        -- statement write
                        with chosen as (
                            select t.id, t.kind, t.poison, t.eligible, t.visit, t.cursor_before,
                                   t.ring_position, t.scope_key, t.ordinal
                              from unnest(v_pending) with ordinality
                                       as t(id, kind, poison, eligible, visit, cursor_before,
                                            ring_position, scope_key, ordinal)
                        ), mutated as (
                            update docket_runs r
                               set claim_token = case when c.poison then null else gen_random_uuid() end,
                                   claimed_at = case when c.poison then null else p_now end,
                                   wake_at = null,
                                   claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                                   tenant_admitted_at = case
                                       when c.poison then null
                                       when c.kind = 'queued_ready' then p_now
                                       else r.tenant_admitted_at end,
                                   poisoned_at = case when c.poison then p_now end,
                                   poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                                   updated_at = now()
                              from chosen c
                             where r.id = c.id
                            returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash,
                                      r.checkpoint_seq, r.claim_token, r.claimed_at,
                                      r.claim_attempts, r.poisoned_at, r.poison_reason,
                                      c.kind, c.eligible, c.visit, c.cursor_before, c.ring_position,
                                      c.scope_key as visit_scope, c.ordinal
                        ), granted as (
                            -- Outcome-backed service evidence: once per grant.
                            update docket_claim_partitions pa
                               set admission_epoch = pa.admission_epoch + 1
                             where pa.scope_key = any (v_pending_grants)
                        ), moved as (
                            update docket_claim_policy p
                               set scan_ring_position = v_cursor
                             where p.id = 1 and v_position is null
                        )
                        select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id,
                               m.graph_hash, m.checkpoint_seq, m.claim_token, m.claimed_at,
                               m.claim_attempts, m.poisoned_at, m.poison_reason, m.kind,
                               m.eligible, v_call_token, v_xid, m.visit,
                               (v_written + m.ordinal)::integer, p_demand,
                               m.cursor_before, m.ring_position, m.ring_position, m.visit_scope,
                               case m.kind
                                   when 'admitted_ready' then 'admitted_reacquisition'
                                   when 'queued_ready' then 'queued_promotion'
                                   else 'expired_recovery' end,
                               null::integer, null::integer
                          from mutated m;
                        -- end statement
                    v_written := v_written + cardinality(v_pending);
                    v_pending := '{}';
                    v_pending_grants := '{}';
                end if;
                exit when v_position is null;
            end if;

            v_visit := v_visit + 1;
            if v_xid is null then
                v_xid := txid_current();
            end if;
            v_cursor_before := v_cursor;
            v_cursor := v_position;
            v_visit_outcomes := 0;
            v_parked := false;
            v_parked_until := null;

            if v_win_index is not null and not v_win_pages[v_win_index] then
                -- A run of consecutive window positions whose probe found
                -- no page is locked when the walk reaches its first one,
                -- with the partition lock of each, without waiting; the
                -- window's probe stands for each lock statement's probe.
                -- The run ends before the next position with a page, so
                -- no visit in between can end the call: every partition
                -- locked here is one the walk inspects.
                if v_win_index > v_run_end then
                    v_run_end := v_win_index;
                    while v_run_end < cardinality(v_win_pages) and not v_win_pages[v_run_end + 1] loop
                        v_run_end := v_run_end + 1;
                    end loop;
                    v_run_scopes := v_win_scopes[v_win_index:v_run_end];
                    -- The lock returns each partition's newest committed
                    -- version, so a pause committed after the window's
                    -- snapshot is seen here.
                    -- statement empty_run_lock
                    select coalesce(array_agg(l.scope_key), '{}'),
                           coalesce(array_agg(l.scope_key) filter (where l.paused), '{}')
                      into v_run_locked, v_run_paused
                      from (select pa.scope_key, pa.paused
                              from docket_claim_partitions pa
                             where pa.scope_key = any (v_run_scopes)
                               for no key update skip locked) as l;
                    -- end statement
                    if not p_trace and v_run_end > v_win_index then
                        -- Without trace rows the rest of the run needs no
                        -- step of its own: each of its positions is one
                        -- inspection without an outcome, so the walk counts
                        -- them and moves the cursor to the run's last one.
                        -- No position of the run can hold unwritten
                        -- outcomes of this call: those rows are still due
                        -- in every snapshot until written, so the window's
                        -- probe would have found its page.
                        v_visit := v_visit + (v_run_end - v_win_index);
                        v_cursor := v_win_positions[v_run_end];
                        v_win_next := v_run_end + 1;
                    end if;
                end if;
                v_disposition := case when v_scope = any (v_run_paused) then 'paused'
                                      when v_scope = any (v_run_locked) then 'empty_page'
                                      else 'partition_lock_skip' end;
            else
                -- The lock statement also probes the three pages, so a visit
                -- with nothing due and nothing expired ends as empty_page
                -- without the candidate statement. Its snapshot predates the
                -- lock, which for an empty page only means the visit saw the
                -- scope a moment earlier; a page found here is read again, in
                -- a snapshot taken after the lock, by the candidate statement.
                -- A paused partition's pages are not probed: the case
                -- evaluates its branch only for an unpaused one. A position
                -- the ring window's probe found a page at is not probed
                -- again: the candidate statement reads its pages anyway, and
                -- a page gone since ends the visit there as empty_page, the
                -- disposition this probe would have given (the full-ring walk
                -- never parks, so the probe decides nothing else).
                -- statement partition_lock
                select pa.max_active, pa.paused,
                       case when pa.paused then false when v_win_index is not null then true else
                       (select true from docket_runs r
                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                         order by r.wake_at, r.id
                         limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                            order by r.wake_at, r.id
                            limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                            order by r.claimed_at, r.id
                            limit 1) is not null
                       end
                  into v_override, v_paused, v_has_page
                  from docket_claim_partitions pa
                 where pa.scope_key = v_scope
                   for no key update skip locked;
                -- end statement

                if not found then
                    v_disposition := 'partition_lock_skip';
                elsif v_paused then
                    v_disposition := 'paused';
                elsif not v_has_page then
                    v_disposition := 'empty_page';
                    if v_park then
                        -- Park: first the schedule row, without waiting. A
                        -- writer that holds it has not committed, and its own
                        -- write will set the row right, so the partition stays
                        -- awake. Once the lock is held, a writer that could make
                        -- a row of the scope eligible either committed before it
                        -- (the next statement's snapshot, taken after the lock,
                        -- sees its row) or waits for this call and writes the
                        -- schedule row after the park. The dormancy probe of
                        -- the lock statement above is older than the lock, so
                        -- the park re-checks dormancy in its own snapshot.
                        -- statement park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- Dormant: no claimed running row (an expired steal
                            -- depends on the caller's cutoff, a live claim will
                            -- be released) and no healthy unclaimed running row
                            -- due at p_now. Parked until the earliest wake_at of
                            -- the scope's healthy unclaimed running rows, else
                            -- for good (a write wakes it).
                            -- A partition whose last unfinished run finished
                            -- after the probe has left the ring: it is not
                            -- walked, and its next run makes it a member again,
                            -- so it is not parked.
                            -- statement park
                            update docket_claim_schedule s
                               set parked_until = coalesce(least(
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1),
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1)), 'infinity')
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                else
                    v_cap := coalesce(v_override, v_default_cap);
                    v_limit := least(c_grant_outcomes, v_remaining);
                    v_admitted := null;
                    v_frozen := 0;
                    v_no_slot := false;
                    v_lead_locked := false;
                    v_withheld := false;
                    v_walk_served_ready := v_served_ready;
                    v_walk_served_expired := v_served_expired;
                    v_walk_remaining := v_remaining;
                    v_queue_no := 0;
                    v_next_queue := 1;
                    v_take := '{}';
                    v_promote_ids := '{}';
                    v_moved_ids := '{}';
                    v_refused_ids := '{}';

                    -- One statement after the partition lock, so its snapshot
                    -- (admitted count and pages) sees every grant committed
                    -- before the lock. The pages are MVCC reads: admitted-ready
                    -- and expired rows up to K each, and the queued FIFO up to
                    -- this grant's limit, since promotion is contiguous from the
                    -- head and could never reach further. They are ranked, at
                    -- most K ids are frozen, and exactly those are locked without
                    -- waiting, in rank order. A lock returns the newest committed
                    -- version of its row, which the walk rechecks.
                    --
                    -- Freezing: the first K / 4 rows of each class whose head
                    -- matters (with demand >= 2 a class not yet served in this
                    -- call, with demand 1 both) first; admitted before queued;
                    -- with demand 1 the preferred class; then the FIFO order for
                    -- queued rows, and poison first, eligible time and id for the
                    -- others. A class's rows are its admitted-ready rows then its
                    -- queued FIFO (ready), resp. its expired rows, each by
                    -- eligible time and id. Queued rows rank among themselves in
                    -- FIFO order, so the frozen ones are a prefix of the FIFO.
                    --
                    -- The walk meets the rows after locking: admitted before
                    -- queued; then each class head whose place matters, chosen
                    -- among the rows this visit locked and found fresh (the
                    -- oldest admitted one of its class); with demand 1 the
                    -- preferred class; poison first, eligible time and id. The
                    -- queued rows come last in FIFO order and are numbered 1, 2,
                    -- ...; a queued row held elsewhere or stale still takes its
                    -- number, so it blocks every promotion behind it.
                    --
                    -- The admitted count only matters when a queued row could
                    -- meet the cap. Admitted and queued rows are both unfinished,
                    -- so while the scope has no more unfinished runs than its
                    -- cap no promotion of this visit can reach it, and the count
                    -- is skipped. Counting stops at cap + Q, beyond which at most
                    -- Q admitted poisons could never bring it under the cap.
                    for v_candidate in
                        -- statement candidates
                        with pages as (
                            -- Admitted-ready: docket_runs_admitted_ready_idx.
                            (select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit c_frozen)
                            union all
                            -- Queued-ready, the FIFO: docket_runs_queued_ready_idx.
                            (select r.id, 'queued_ready', 'ready',
                                    r.wake_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit v_limit)
                            union all
                            -- Expired admitted claims: docket_runs_admitted_claimed_idx.
                            (select r.id, 'expired', 'expired',
                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                              order by r.claimed_at, r.id
                              limit c_frozen)
                        ), ranked as (
                            select p.id, p.kind, p.class, p.eligible,
                                   case when row_number() over (partition by p.class
                                                 order by p.kind = 'queued_ready', p.eligible, p.id) <= c_class_reserve
                                             and (p_demand = 1 or not (case p.class
                                                 when 'ready' then v_served_ready
                                                 else v_served_expired end))
                                        then 0 else 1 end as reserved,
                                   case when p_demand = 1 and p.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when p.kind <> 'queued_ready' and p.poison then 0 else 1 end
                                       as poison_first
                              from pages p
                        ), frozen as (
                            select h.id, h.kind, h.class, h.eligible, h.preference_last, h.poison_first
                              from ranked h
                             order by h.reserved, h.kind = 'queued_ready', h.preference_last,
                                      h.poison_first, h.eligible, h.id
                             limit c_frozen
                        ), locked as (
                            -- Each frozen id by its primary key (docket_runs_pkey), in
                            -- rank order, without waiting; the locked version is the
                            -- newest committed one, rechecked against its kind.
                            select f.id, f.kind, f.class, f.eligible, f.preference_last, f.poison_first,
                                   l.id is not null as is_locked,
                                   coalesce(l.scope_key = v_scope
                                       and case f.kind
                                           when 'expired' then l.marked_claimed and l.claimed_at < p_cutoff
                                           when 'admitted_ready' then l.marked_unclaimed and l.wake_at <= p_now
                                           else l.unmarked_unclaimed and l.wake_at <= p_now
                                           end, false) as is_fresh,
                                   coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                                   case when f.kind = 'expired' then l.claimed_at else l.wake_at end
                                       as locked_eligible,
                                   f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                              from frozen f
                              left join lateral (
                                    select r.id, r.scope_key, r.claimed_at, r.wake_at, r.claim_attempts,
                                           docket_run_marked_claimed(r) as marked_claimed,
                                           docket_run_marked_unclaimed(r) as marked_unclaimed,
                                           docket_run_unmarked_unclaimed(r) as unmarked_unclaimed
                                      from docket_runs r
                                     where r.id = f.id
                                       for update skip locked) as l on true
                        ), judged as (
                            select k.id, k.kind, k.is_locked, k.is_fresh, k.is_poison, k.locked_eligible,
                                   k.is_moved, k.preference_last, k.poison_first, k.eligible,
                                   -- The scope's count (docket_claim_schedule_pkey), and its
                                   -- admitted rows only when it has more unfinished runs
                                   -- than its cap: the unclaimed ones on the admitted-ready
                                   -- page's index and the claimed ones on the expired page's,
                                   -- each read up to the bound, so the sum read up to it is
                                   -- exact.
                                   case when (select s.unfinished_count
                                                from docket_claim_schedule s
                                               where s.scope_key = v_scope) > v_cap
                                        then least((select count(*)
                                                      from (select
                                                              from docket_runs r
                                                             where r.scope_key = v_scope
                                                               and docket_run_marked_unclaimed(r)
                                                             limit v_cap::bigint + c_grant_outcomes) as a)
                                                   + (select count(*)
                                                        from (select
                                                                from docket_runs r
                                                               where r.scope_key = v_scope
                                                                 and docket_run_marked_claimed(r)
                                                               limit v_cap::bigint + c_grant_outcomes) as c),
                                                   v_cap::bigint + c_grant_outcomes)
                                        else 0 end as admitted,
                                   -- The class heads are chosen among the rows this visit
                                   -- locked and rechecked: the oldest fresh admitted row of
                                   -- each class, so a head held elsewhere hands its place to
                                   -- the next row of its class.
                                   coalesce(case when k.kind <> 'queued_ready' and k.is_fresh
                                                      and (p_demand = 1 or not (case k.class
                                                          when 'ready' then v_served_ready
                                                          else v_served_expired end))
                                                 then row_number() over (
                                                          partition by k.class, k.kind <> 'queued_ready' and k.is_fresh
                                                          order by k.eligible, k.id) = 1
                                                 end, false) as is_head
                              from locked k
                        )
                        select j.id, j.kind, j.admitted, j.is_locked, j.is_fresh, j.is_poison,
                               j.locked_eligible as eligible, j.is_moved
                          from judged j
                         order by j.kind = 'queued_ready', j.is_head desc, j.preference_last,
                                  j.poison_first, j.eligible, j.id
                        -- end statement
                    loop
                        v_frozen := v_frozen + 1;
                        if v_admitted is null then
                            v_admitted := v_candidate.admitted;
                            v_no_slot := v_admitted >= v_cap;
                        end if;
                        if v_candidate.kind = 'queued_ready' then
                            v_queue_no := v_queue_no + 1;
                        end if;
                        -- The lead rows are those an outcome could come from:
                        -- every admitted row and the queued FIFO head.
                        v_lead := v_candidate.kind <> 'queued_ready' or v_queue_no = 1;
                        continue when not v_candidate.is_locked;
                        if v_lead then
                            v_lead_locked := true;
                        end if;
                        continue when cardinality(v_take) >= v_limit;

                        v_class := case when v_candidate.kind = 'expired' then 'expired' else 'ready' end;
                        -- Last-slot rule: the final outcome of the call is kept
                        -- for a nonempty class that is still unserved.
                        if v_walk_remaining = 1 and p_demand >= 2
                                and not (case v_class when 'ready' then v_walk_served_expired
                                         else v_walk_served_ready end) then
                            if v_lead and v_candidate.is_fresh then
                                v_withheld := true;
                            end if;
                            continue;
                        end if;

                        if v_candidate.kind = 'queued_ready' then
                            -- Promotion is contiguous from the FIFO head: a head
                            -- that is missing, stale or without a slot blocks
                            -- everything behind it in this visit.
                            continue when v_queue_no <> v_next_queue;
                            continue when not v_candidate.is_fresh;
                            continue when v_admitted >= v_cap;
                            v_next_queue := v_next_queue + 1;
                            v_promote_ids := v_promote_ids || v_candidate.id;
                            if v_candidate.is_moved then
                                v_moved_ids := v_moved_ids || v_candidate.id;
                            end if;
                            if not v_candidate.is_poison then
                                v_admitted := v_admitted + 1;
                            end if;
                        else
                            continue when not v_candidate.is_fresh;
                            if v_candidate.is_poison then
                                -- An admitted poison releases its marker.
                                v_admitted := v_admitted - 1;
                            end if;
                        end if;

                        v_take := v_take || row(v_candidate.id, v_candidate.kind, v_candidate.is_poison,
                                                v_candidate.eligible, v_visit, v_cursor_before, v_position,
                                                v_scope)::docket_claim_pending;
                        v_walk_remaining := v_walk_remaining - 1;
                        if v_class = 'ready' then
                            v_walk_served_ready := true;
                        else
                            v_walk_served_expired := true;
                        end if;
                    end loop;

                    -- A promoted row is the FIFO head of the page's snapshot by
                    -- contiguity, unless its locked version is due at another
                    -- time than the page read. Such a row is re-checked in a
                    -- fresh snapshot against every older queued row of the
                    -- scope, and refused as stale if one is not promoted by this
                    -- grant.
                    if cardinality(v_moved_ids) > 0 then
                        -- statement fifo_recheck
                        select coalesce(array_agg(r.id), '{}')
                          into v_refused_ids
                          from docket_runs r
                         where r.id = any (v_moved_ids)
                           and exists (
                               select 1
                                 from docket_runs o
                                where o.scope_key = r.scope_key and docket_run_unmarked_unclaimed(o) and o.wake_at <= p_now
                                  and (o.wake_at, o.id) < (r.wake_at, r.id)
                                  and not (o.id = any (v_promote_ids)));
                        -- end statement
                        if cardinality(v_refused_ids) > 0 then
                            v_kept := '{}';
                            foreach v_item in array v_take loop
                                continue when v_item.id = any (v_refused_ids);
                                v_kept := v_kept || v_item;
                            end loop;
                            v_take := v_kept;
                        end if;
                    end if;

                    v_visit_outcomes := cardinality(v_take);
                    if v_visit_outcomes > 0 then
                        v_pending := v_pending || v_take;
                        v_pending_grants := v_pending_grants || v_scope;
                        foreach v_item in array v_take loop
                            if v_item.kind = 'expired' then
                                v_served_expired := true;
                            else
                                v_served_ready := true;
                            end if;
                        end loop;
                    end if;
                    v_remaining := v_remaining - v_visit_outcomes;
                    -- Without an outcome the first cause that applies names the
                    -- visit (docs/operations.md, visit dispositions): no slot
                    -- for its frozen queued rows, a fresh lead row the last-slot
                    -- rule withheld, lead rows locked here but stale (rows the
                    -- FIFO re-check refused count so), else every lead row held
                    -- elsewhere. Each holds whatever the freezing width was.
                    v_disposition := case
                        when v_visit_outcomes > 0 then 'grant'
                        when v_frozen = 0 then 'empty_page'
                        when v_queue_no > 0 and v_no_slot then 'cap_debt_denial'
                        when v_withheld then 'denied'
                        when v_lead_locked then 'stale'
                        else 'lock_miss' end;
                end if;
            end if;

            if v_visit_outcomes = 0 then
                v_stepping := false;
            end if;

            if p_trace then
                row_kind := 'inspection';
                error_reason := null;
                run_id := null;
                tenant_id := null;
                graph_id := null;
                graph_hash := null;
                checkpoint_seq := null;
                claim_token := null;
                claimed_at := null;
                claim_attempt := case when v_park then v_woken end;
                poisoned_at := null;
                poison_reason := null;
                work_class := null;
                eligible_at := case when v_parked and v_parked_until <> 'infinity' then v_parked_until end;
                call_token := v_call_token;
                transaction_id := v_xid;
                visit_ordinal := v_visit;
                outcome_ordinal := case when v_parked then 0 end;
                demand := p_demand;
                cursor_before := v_cursor_before;
                cursor_after := v_cursor;
                ring_position := v_position;
                scope_key := v_scope;
                disposition := v_disposition;
                outcome_count := v_visit_outcomes;
                epoch_delta := case when v_visit_outcomes > 0 then 1 else 0 end;
                return next;
            end if;
        end loop;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

-- include docket_tenant_fair_claim_combined_v1.sql
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
    v_combiner boolean := false;
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
            if not v_combiner then
                -- statement combiner_lock
                v_combiner := pg_try_advisory_xact_lock(v_key);
                -- end statement
            end if;
            -- A combiner that never waited has no ticket, so nothing can
            -- have been delivered to it.
            exit wait when v_combiner and v_ticket is null;
            if not v_combiner then
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
            end if;
            -- A waiter collects what a combiner delivered to its ticket; so
            -- does a caller that became the combiner after waiting, since a
            -- combiner before it may have served the ticket.
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
            exit wait when v_combiner;
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
                v_combiner := true;
            exception when lock_not_available then
                -- The wait's deadline has passed: the next round gives up.
                null;
            end;
        end loop;

        -- This call is the combiner.
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

-- include docket_legacy_claim_v1.sql
-- The Legacy admission engine: tenant-blind and oldest-first, for tenant mode
-- none. It shares the TenantFair arguments and result shape so one decoder
-- serves both, but it has no partitions, no ring, no cursor and no admission:
-- a lease never touches tenant_admitted_at (a poison clears it, because a
-- poisoned row may not hold one).
--
-- Candidates are read through two cursors with SKIP LOCKED and merged one row
-- at a time, so a call locks only the rows it takes plus at most one
-- look-ahead row per class.
--
-- The argument checks, the transaction contract and the lock wait cap are
-- those of TenantFair, shared through docket_claim_precheck. Each SQL
-- statement sits between a "-- statement NAME" and an "-- end statement"
-- line; the plan regression test reads them from this file.
create or replace function docket_legacy_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
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
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_call_outcomes constant integer := 256;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_error text;

    v_limit integer := least(p_demand, c_call_outcomes);
    v_remaining integer := least(p_demand, c_call_outcomes);
    v_served_ready boolean := true;
    v_served_expired boolean := true;
    v_ready_rows refcursor;
    v_expired_rows refcursor;
    v_have_ready boolean := false;
    v_have_expired boolean := false;
    v_ready_done boolean := false;
    v_expired_done boolean := false;
    v_ready_id bigint;
    v_ready_eligible timestamptz;
    v_ready_poison boolean;
    v_ready_marked boolean;
    v_expired_id bigint;
    v_expired_eligible timestamptz;
    v_expired_poison boolean;
    v_pick_ready boolean;
    v_take_ids bigint[] := '{}';
    v_take_kinds text[] := '{}';
    v_take_poison boolean[] := '{}';
    v_take_eligible timestamptz[] := '{}';
    v_call_token uuid;
    v_xid bigint;
begin
    -- The same transaction contract as TenantFair, so neither engine can
    -- run where the other would refuse.
    v_precheck := docket_claim_precheck('docket_legacy_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A share lock is enough to exclude TenantFair, which takes the row
        -- for update, while Legacy callers still run side by side.
        begin
            -- statement policy_share
            select p.admission_mode into v_mode
              from docket_claim_policy p
             where p.id = 1
               for share;
            -- end statement
            v_policy_found := found;
        exception when lock_not_available then
            v_error := 'lock_contention';
        end;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode is distinct from 'legacy' then
                v_error := 'inactive_engine';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;

        -- An empty class counts as served; each probe reads the oldest
        -- entry of the ready or expired index.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;

        -- The domain's due rows by (wake_at, id), docket_runs_ready_idx.
        open v_ready_rows for
            -- statement ready_rows
            select r.id, r.wake_at, r.claim_attempts >= p_max_attempts, r.tenant_admitted_at is not null
              from docket_runs r
             where docket_run_unclaimed(r) and r.wake_at <= p_now
             order by r.wake_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement
        -- Its claims by (claimed_at, id), docket_runs_expired_idx.
        open v_expired_rows for
            -- statement expired_rows
            select r.id, r.claimed_at, r.claim_attempts >= p_max_attempts
              from docket_runs r
             where docket_run_claimed(r) and r.claimed_at < p_cutoff
             order by r.claimed_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement

        loop
            exit when cardinality(v_take_ids) >= v_limit;
            -- Demand one reads the other class only when the preferred one
            -- has nothing, so it locks no row it will not take.
            if not v_have_ready and not v_ready_done
                    and (p_demand >= 2 or p_preference is distinct from 'expired' or v_expired_done) then
                fetch v_ready_rows into v_ready_id, v_ready_eligible, v_ready_poison, v_ready_marked;
                v_have_ready := found;
                v_ready_done := not found;
            end if;
            if not v_have_expired and not v_expired_done
                    and (p_demand >= 2 or p_preference is distinct from 'ready' or v_ready_done) then
                fetch v_expired_rows into v_expired_id, v_expired_eligible, v_expired_poison;
                v_have_expired := found;
                v_expired_done := not found;
            end if;

            if v_have_ready and v_have_expired then
                -- Demand >= 2 takes an unserved class head first; otherwise
                -- (demand one reads both only without a preference) the
                -- older eligible time wins.
                v_pick_ready := case
                    when p_demand >= 2 and v_served_ready <> v_served_expired then not v_served_ready
                    else (v_ready_eligible, v_ready_id) <= (v_expired_eligible, v_expired_id) end;
            elsif v_have_ready then
                v_pick_ready := true;
            elsif v_have_expired then
                v_pick_ready := false;
            elsif v_ready_done and v_expired_done then
                exit;
            else
                continue;
            end if;

            -- Last-slot rule: the final outcome is kept for a nonempty class
            -- that is still unserved; that class has no row left here.
            exit when p_demand >= 2 and v_remaining = 1
                and not (case when v_pick_ready then v_served_expired else v_served_ready end);

            if v_pick_ready then
                v_take_ids := v_take_ids || v_ready_id;
                v_take_kinds := v_take_kinds
                    || case when v_ready_marked then 'admitted_ready' else 'queued_ready' end;
                v_take_poison := v_take_poison || v_ready_poison;
                v_take_eligible := v_take_eligible || v_ready_eligible;
                v_served_ready := true;
                v_have_ready := false;
            else
                v_take_ids := v_take_ids || v_expired_id;
                v_take_kinds := v_take_kinds || 'expired'::text;
                v_take_poison := v_take_poison || v_expired_poison;
                v_take_eligible := v_take_eligible || v_expired_eligible;
                v_served_expired := true;
                v_have_expired := false;
            end if;
            v_remaining := v_remaining - 1;
        end loop;
        close v_ready_rows;
        close v_expired_rows;

        if cardinality(v_take_ids) > 0 then
            v_call_token := gen_random_uuid();
            v_xid := txid_current();
            return query
                -- statement write
                with chosen as (
                    select t.id, t.kind, t.poison, t.eligible, t.walk
                      from unnest(v_take_ids, v_take_kinds, v_take_poison, v_take_eligible)
                               with ordinality as t(id, kind, poison, eligible, walk)
                ), mutated as (
                    update docket_runs r
                       set claim_token = case when c.poison then null else gen_random_uuid() end,
                           claimed_at = case when c.poison then null else p_now end,
                           wake_at = null,
                           claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                           tenant_admitted_at = case when c.poison then null else r.tenant_admitted_at end,
                           poisoned_at = case when c.poison then p_now end,
                           poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                           updated_at = now()
                      from chosen c
                     where r.id = c.id
                    returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash, r.checkpoint_seq,
                              r.claim_token, r.claimed_at, r.claim_attempts, r.poisoned_at,
                              r.poison_reason, c.kind, c.eligible, c.walk
                )
                select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id, m.graph_hash,
                       m.checkpoint_seq, m.claim_token, m.claimed_at, m.claim_attempts,
                       m.poisoned_at, m.poison_reason, m.kind, m.eligible, v_call_token, v_xid,
                       0, (row_number() over (order by m.walk))::integer, p_demand,
                       null::bigint, null::bigint, null::bigint, null::text,
                       case when m.kind = 'expired' then 'expired_recovery' end,
                       null::integer, null::integer
                  from mutated m
                 order by m.walk;
                -- end statement
        end if;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

-- migrate:down

-- Back to V1: every object V2 added goes, and docket_runs keeps its V1
-- columns and data (the admission marker, attempts, errors and trace
-- contexts are dropped with their columns).
drop trigger docket_runs_wake_partition_trg on docket_runs;
drop trigger docket_runs_guard_truncate_trg on docket_runs;
drop trigger docket_runs_guard_scope_trg on docket_runs;
drop trigger docket_runs_track_status_trg on docket_runs;
drop trigger docket_runs_track_delete_trg on docket_runs;
drop trigger docket_runs_track_insert_trg on docket_runs;
drop function docket_legacy_claim(timestamptz, timestamptz, integer, integer, text, boolean);
drop function docket_tenant_fair_claim_combined(timestamptz, timestamptz, integer, integer, text);
drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean);
drop function docket_claim_precheck(text, timestamptz, timestamptz, integer, integer, text, boolean);
drop function docket_commit_runs(text[], text[], text[], bigint[], integer[], text[], text[], text[], text[],
                                 timestamptz[], bigint[], text[], text[], text[]);
drop function docket_run_phase(docket_runs, timestamptz);
drop function docket_run_admitted(docket_runs);
drop function docket_run_unmarked_claimed(docket_runs);
drop function docket_run_marked_claimed(docket_runs);
drop function docket_run_unmarked_unclaimed(docket_runs);
drop function docket_run_marked_unclaimed(docket_runs);
drop function docket_run_claimed(docket_runs);
drop function docket_run_unclaimed(docket_runs);
drop function docket_run_healthy(docket_runs);
drop table docket_claim_deliveries;
drop sequence docket_claim_tickets_read;
drop sequence docket_claim_tickets;
drop type docket_claim_outcome;
drop type docket_claim_pending;
drop table docket_schedules;
drop table docket_claim_schedule;
drop table docket_claim_partitions;
drop table docket_claim_policy;
drop function docket_runs_wake_partition();
drop function docket_guard_truncate();
drop function docket_runs_guard_scope();
drop function docket_runs_track_status();
drop function docket_runs_track_delete();
drop function docket_runs_track_insert();
drop function docket_claim_schedule_guard();
drop function docket_claim_partitions_guard();
drop function docket_claim_partitions_schedule();
drop index docket_runs_finished_idx;
drop index docket_runs_unadmitted_claimed_idx;
drop index docket_runs_admitted_claimed_idx;
drop index docket_runs_queued_ready_idx;
drop index docket_runs_admitted_ready_idx;
alter table docket_runs
    drop column trace_context,
    drop column errors,
    drop column attempt,
    drop column tenant_admitted_at;

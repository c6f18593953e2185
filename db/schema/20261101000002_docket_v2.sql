-- migrate:up

-- Schema V2: TenantFair admission authority. Function bodies live once in
-- db/functions; the blocks between "include" and "end include" are copied
-- from there by `make generate`, and CI fails when they drift.

-- The singleton policy: engine mode, persisted default cap and the durable
-- scan cursor that every poller of this fairness domain serializes on.
create table docket_claim_policy (
    id smallint not null default 1 constraint docket_claim_policy_pkey primary key,
    admission_mode text not null default 'legacy',
    max_active integer,
    configured_max_active integer,
    policy_version bigint not null default 0,
    scan_ring_position bigint not null default 0,
    initialized_at timestamptz,
    updated_at timestamptz not null default now(),
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

-- One admission authority per owner scope: the optional cap override and the
-- outcome-backed service epoch.
create table docket_claim_partitions (
    scope_key text not null constraint docket_claim_partitions_pkey primary key,
    max_active integer,
    partition_version bigint not null default 0,
    admission_epoch bigint not null default 0,
    inserted_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint docket_claim_partitions_max_active_check check (max_active >= 1),
    constraint docket_claim_partitions_version_check check (partition_version >= 0),
    constraint docket_claim_partitions_epoch_check check (admission_epoch >= 0)
);

-- The unfinished ring: an immutable position per partition and the exact
-- count of its running and waiting runs. Zero-count rows stay to keep their
-- position.
create table docket_claim_schedule (
    scope_key text not null constraint docket_claim_schedule_pkey primary key
        constraint docket_claim_schedule_scope_fkey
            references docket_claim_partitions (scope_key) on delete cascade,
    ring_position bigint generated always as identity
        constraint docket_claim_schedule_ring_position_key unique,
    unfinished_count bigint not null default 0,
    inserted_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint docket_claim_schedule_position_check check (ring_position > 0),
    constraint docket_claim_schedule_unfinished_check check (unfinished_count >= 0)
);

-- The ring proper: exactly the positions that own unfinished work.
create index docket_claim_schedule_ring_idx on docket_claim_schedule (ring_position)
    where unfinished_count > 0;

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

-- Admitted count per scope (index-only under partition authority).
create index docket_runs_admitted_idx on docket_runs (scope_key)
    where tenant_admitted_at is not null and status = 'running' and poisoned_at is null;

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
create function docket_runs_track_insert() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    insert into docket_claim_partitions (scope_key)
    select distinct c.scope_key from docket_created_runs c order by c.scope_key
    on conflict (scope_key) do nothing;

    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           updated_at = now()
      from (select c.scope_key, count(*) as created
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

create trigger docket_claim_partitions_guard_trg
    before update or delete on docket_claim_partitions
    for each row execute function docket_claim_partitions_guard();

create trigger docket_claim_schedule_guard_trg
    before insert or update or delete on docket_claim_schedule
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

-- migrate:down

drop trigger docket_runs_guard_truncate_trg on docket_runs;
drop trigger docket_runs_guard_scope_trg on docket_runs;
drop trigger docket_runs_track_status_trg on docket_runs;
drop trigger docket_runs_track_delete_trg on docket_runs;
drop trigger docket_runs_track_insert_trg on docket_runs;
drop table docket_claim_schedule;
drop table docket_claim_partitions;
drop table docket_claim_policy;
drop function docket_guard_truncate();
drop function docket_runs_guard_scope();
drop function docket_runs_track_status();
drop function docket_runs_track_delete();
drop function docket_runs_track_insert();
drop function docket_claim_schedule_guard();
drop function docket_claim_partitions_guard();
drop function docket_claim_partitions_schedule();
alter table docket_runs drop column tenant_admitted_at;


-- Schema V5: periodic runs. A schedule belongs to a scope exactly as a run
-- does and inserts ordinary runs through the normal admission path; nothing
-- of the claim engine or the ring reads this table. A tick is taken by one
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


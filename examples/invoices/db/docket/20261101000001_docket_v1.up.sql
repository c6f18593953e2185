
-- Schema V1: the host run table. Every invariant a claim holder or an operator
-- could break is a named database constraint, so no code path can persist a
-- shape the admission engines would misread.
create table docket_runs (
    id bigserial constraint docket_runs_pkey primary key,
    run_id text not null constraint docket_runs_run_id_key unique,
    tenant_id text,
    -- The owner partition: tenantless runs share the empty scope, which is an
    -- ordinary partition and not a wildcard.
    scope_key text generated always as (coalesce(tenant_id, '')) stored,
    graph_id text not null,
    graph_hash text not null,
    status text not null,
    step integer not null default 0,
    state jsonb not null,
    checkpoint_seq bigint not null default 0,
    latest_checkpoint_type text,
    claim_token uuid,
    claimed_at timestamptz,
    wake_at timestamptz,
    claim_attempts integer not null default 0,
    claim_abandons integer not null default 0,
    poisoned_at timestamptz,
    poison_reason text,
    inserted_at timestamptz not null default now(),
    started_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    finished_at timestamptz,
    constraint docket_runs_tenant_id_check
        check (tenant_id is null or tenant_id <> ''),
    constraint docket_runs_status_check
        check (status in ('running', 'waiting', 'done', 'failed', 'cancelled')),
    constraint docket_runs_finished_check
        check ((status in ('done', 'failed', 'cancelled')) = (finished_at is not null)),
    constraint docket_runs_claim_pair_check
        check ((claim_token is null) = (claimed_at is null)),
    constraint docket_runs_poison_pair_check
        check ((poisoned_at is null) = (poison_reason is null)),
    constraint docket_runs_poison_reason_check
        check (poison_reason is null
               or poison_reason in ('max_claim_attempts_exceeded', 'max_claim_abandons_exceeded')),
    -- Parked (waiting) and terminal rows are outside admission entirely.
    constraint docket_runs_parked_check
        check (status = 'running'
               or (claim_token is null and wake_at is null and poisoned_at is null)),
    -- A poisoned row waits for an operator: no claim and no timer can revive it.
    constraint docket_runs_poisoned_check
        check (poisoned_at is null
               or (status = 'running' and claim_token is null and wake_at is null)),
    -- A healthy running row is either held (claim) or due at some time (wake),
    -- never both and never neither, so it can always be found by one scan.
    constraint docket_runs_healthy_check
        check (status <> 'running' or poisoned_at is not null
               or ((wake_at is null) <> (claim_token is null))),
    constraint docket_runs_counters_check
        check (step >= 0 and checkpoint_seq >= 0
               and claim_attempts >= 0 and claim_abandons >= 0)
);

-- Ready scan: healthy unclaimed running rows in due order.
create index docket_runs_ready_idx on docket_runs (wake_at, id)
    where status = 'running' and poisoned_at is null and claim_token is null;

-- Expired scan: healthy claimed running rows by claim age.
create index docket_runs_expired_idx on docket_runs (claimed_at, id)
    where status = 'running' and poisoned_at is null and claim_token is not null;

-- Listing: newest first inside one owner scope.
create index docket_runs_list_idx on docket_runs (scope_key, started_at desc, run_id desc);


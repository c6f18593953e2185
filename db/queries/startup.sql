-- name: MissingColumns :many
-- Startup shape: the required columns ("table.column") the current
-- search_path does not resolve, in the order given.
select e.qualified::text as missing
  from unnest(sqlc.arg(qualified_columns)::text[]) with ordinality as e(qualified, ordinal)
 where not exists (
        select 1 from pg_catalog.pg_attribute a
         where a.attrelid = to_regclass(split_part(e.qualified, '.', 1))
           and a.attname = split_part(e.qualified, '.', 2)
           and not a.attisdropped)
 order by e.ordinal;

-- name: SchemaShape :one
-- Startup shape: the schema the search_path resolves to (NULL when it names
-- no existing schema) and the number of claim functions with the fixed
-- six-argument identity versus any identity, all in that schema.
select
    coalesce(current_schema()::text, '') as schema_name,
    current_setting('search_path')::text as search_path,
    (select count(*) from pg_catalog.pg_proc p
      where p.proname = 'docket_tenant_fair_claim'
        and p.pronamespace = (select n.oid from pg_catalog.pg_namespace n where n.nspname = current_schema())) as claim_function_count,
    (select count(*) from pg_catalog.pg_proc p
      where p.proname = 'docket_tenant_fair_claim'
        and p.pronamespace = (select n.oid from pg_catalog.pg_namespace n where n.nspname = current_schema())
        -- proargtypes is a zero-based vector; comparing it as text avoids the
        -- array lower bound, which would make an array comparison always false.
        and array_to_string(p.proargtypes::regtype[], ', ')
            = 'timestamp with time zone, timestamp with time zone, integer, integer, text, boolean') as claim_function_exact_count;

-- name: LockClaimPolicy :one
-- Startup synchronization serializes on the singleton row.
select * from /*schema*/docket_claim_policy where id = 1 for update;

-- name: InitializeClaimPolicy :one
-- First TenantFair start, or a changed configured cap: persist the default.
update /*schema*/docket_claim_policy
   set admission_mode = 'tenant_fair',
       max_active = sqlc.arg(max_active),
       configured_max_active = sqlc.arg(max_active),
       policy_version = policy_version + 1,
       initialized_at = coalesce(initialized_at, now()),
       updated_at = now()
 where id = 1
returning *;

-- name: SetAdmissionMode :one
-- Engine switch at startup without a cap change.
update /*schema*/docket_claim_policy
   set admission_mode = sqlc.arg(admission_mode),
       updated_at = now()
 where id = 1
returning *;

-- name: MarkLegacyClaimsAdmitted :execrows
-- Switching from Legacy to TenantFair adopts every live claim as an admission,
-- exactly like the V1 -> V2 backfill, so TenantFair can recover it if it expires.
update /*schema*/docket_runs r
   set tenant_admitted_at = r.claimed_at
 where /*schema*/docket_run_unmarked_claimed(r);

-- name: InstalledFunctionBodies :many
-- Startup compares each Docket function's body with the source the binary
-- embeds, so a schema whose functions were changed by hand, or installed by
-- an older release of a migration, is refused instead of silently diverging.
select p.proname::text as name, md5(p.prosrc) as body_md5
  from pg_catalog.pg_proc p
 where p.pronamespace = (select n.oid from pg_catalog.pg_namespace n where n.nspname = current_schema())
   and p.proname like 'docket\_%'
 order by 1, 2;

-- name: SynchronizeParkDormant :one
-- A changed configured ParkDormant: persist it as the domain's walk and as
-- the last configured value, as a write of the policy (version + 1).
update /*schema*/docket_claim_policy
   set park_dormant = sqlc.arg(park_dormant)::boolean,
       configured_park_dormant = sqlc.arg(park_dormant)::boolean,
       policy_version = policy_version + 1,
       updated_at = now()
 where id = 1
returning *;

-- name: UnparkAllPartitions :execrows
-- Leaving parked mode, or entering TenantFair from Legacy, puts every parked
-- partition back in the ring. Callers hold the policy row, so no claim call
-- parks concurrently; the next parked-mode call parks again what is dormant.
update /*schema*/docket_claim_schedule
   set parked_until = null
 where parked_until is not null;

-- name: LockAwakePartitionsBatch :many
-- Switching parking on parks what is dormant now, in batches: first this
-- statement locks the next members of the awake ring after a ring position,
-- in ring order (the awake ring's own index), without waiting. A row some
-- writer or claim call holds is skipped and stays awake for the walk to
-- park; the caller moves on past it.
select s.scope_key, s.ring_position
  from /*schema*/docket_claim_schedule s
 where s.ring_position > sqlc.arg(after_position)::bigint
   and s.ring_position <= sqlc.arg(up_to_position)::bigint
   and s.in_ring and s.parked_until is null
 order by s.ring_position
 limit sqlc.arg(batch_size)::integer
   for no key update skip locked;

-- name: LastAwakeRingPosition :one
-- The largest position of the awake ring (0 when it is empty), where
-- switching parking on splits the ring between its parallel batch streams.
select coalesce(max(s.ring_position), 0)::bigint
  from /*schema*/docket_claim_schedule s
 where s.in_ring and s.parked_until is null;

-- name: ParkDormantPartitionsBatch :execrows
-- The second step of a batch park, in a statement whose snapshot is taken
-- after LockAwakePartitionsBatch holds the rows, so it sees every write that
-- committed before the lock, and every later write waits for this
-- transaction and then sets the row right (wake by write). It re-checks
-- dormancy as the walk's park does (no claimed running row, no healthy
-- unclaimed running row due now), leaves paused partitions awake, parks
-- nothing unless the domain still walks parked, and parks each dormant one
-- until the earliest wake_at of its healthy unclaimed running rows, else for
-- good.
update /*schema*/docket_claim_schedule s
   set parked_until = coalesce(least(
           (select r.wake_at from /*schema*/docket_runs r
             where r.scope_key = s.scope_key and /*schema*/docket_run_marked_unclaimed(r)
             order by r.wake_at
             limit 1),
           (select r.wake_at from /*schema*/docket_runs r
             where r.scope_key = s.scope_key and /*schema*/docket_run_unmarked_unclaimed(r)
             order by r.wake_at
             limit 1)), 'infinity')
  -- The locked keys as a relation, and the stretch of the ring they lie in:
  -- a key list tested per row (= any) leads the planner to a scan of every
  -- schedule row per batch, so the batches of a large ring cost the square
  -- of its size; joined by key within the stretch, a batch reads its own
  -- rows only.
  from unnest(sqlc.arg(scope_keys)::text[]) as k(scope_key)
 where s.scope_key = k.scope_key
   and s.ring_position between sqlc.arg(first_position)::bigint and sqlc.arg(last_position)::bigint
   and s.in_ring and s.parked_until is null
   and exists (select from /*schema*/docket_claim_policy pol
                where pol.id = 1 and pol.admission_mode = 'tenant_fair' and pol.park_dormant)
   and not exists (select from /*schema*/docket_claim_partitions pa
                    where pa.scope_key = s.scope_key and pa.paused)
   and not exists (select from /*schema*/docket_runs r
                    where r.scope_key = s.scope_key and /*schema*/docket_run_marked_unclaimed(r) and r.wake_at <= now())
   and not exists (select from /*schema*/docket_runs r
                    where r.scope_key = s.scope_key and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now())
   and not exists (select from /*schema*/docket_runs r
                    where r.scope_key = s.scope_key and /*schema*/docket_run_marked_claimed(r))
   and not exists (select from /*schema*/docket_runs r
                    where r.scope_key = s.scope_key and /*schema*/docket_run_unmarked_claimed(r));

-- name: SynchronizeTenantRequired :execrows
-- Records the domain's tenancy from Config.TenantMode, which the insert
-- trigger docket_runs_require_tenant enforces on every writer; an unchanged
-- one writes nothing.
update /*schema*/docket_claim_policy
   set tenant_required = sqlc.arg(tenant_required)::boolean
 where id = 1 and tenant_required <> sqlc.arg(tenant_required)::boolean;

-- name: PutClaimPolicyDefault :one
-- A runtime default change. configured_max_active is left alone on purpose:
-- the next start with an unchanged configured cap then writes nothing, so
-- this value survives restarts until the configuration itself changes.
-- Callers hold the policy row (LockClaimPolicy), which serializes this write
-- with startup and with every claim call.
update /*schema*/docket_claim_policy
   set max_active = sqlc.arg(max_active)::integer,
       policy_version = policy_version + 1,
       updated_at = now()
 where id = 1
returning *;

-- name: PutClaimPolicyParkDormant :one
-- A runtime switch of the domain's walk. As with the default cap,
-- configured_park_dormant is left alone, so the next start with unchanged
-- configuration keeps this value. Callers hold the policy row.
update /*schema*/docket_claim_policy
   set park_dormant = sqlc.arg(park_dormant)::boolean,
       policy_version = policy_version + 1,
       updated_at = now()
 where id = 1
returning *;

-- name: EnsureClaimPartition :exec
-- An override may precede the scope's first run; the partition's insert
-- trigger gives it its ring position in the same statement.
insert into /*schema*/docket_claim_partitions (scope_key) values (sqlc.arg(scope_key))
on conflict (scope_key) do nothing;

-- name: LockClaimPartition :one
-- Override writes hold the partition authority for the compare-and-set; a
-- claim call that meets the lock skips the partition for this visit.
select * from /*schema*/docket_claim_partitions
 where scope_key = sqlc.arg(scope_key)
   for no key update;

-- name: PutClaimPartitionOverride :one
-- A null max_active resets the override, so the scope inherits the default.
update /*schema*/docket_claim_partitions
   set max_active = sqlc.narg(max_active)::integer,
       partition_version = partition_version + 1,
       updated_at = now()
 where scope_key = sqlc.arg(scope_key)
returning *;

-- name: PutClaimPartitionPaused :one
-- A pause or resume moves the version like an override write, so a console
-- form that read the partition before either one is refused as stale.
update /*schema*/docket_claim_partitions
   set paused = sqlc.arg(paused),
       partition_version = partition_version + 1,
       updated_at = now()
 where scope_key = sqlc.arg(scope_key)
returning *;

-- name: ListDomains :many
-- The schemas of this database that hold a Docket domain (a queue): those
-- with Docket's policy table that this role may use. It reads the catalog
-- alone, so it answers on any search_path and names no Docket relation.
select n.nspname::text as schema_name
  from pg_catalog.pg_class c
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace
 where c.relname = 'docket_claim_policy'
   and c.relkind in ('r', 'p')
   and pg_catalog.has_schema_privilege(n.oid, 'USAGE')
 order by 1;

-- name: PutClaimPolicyRate :one
-- The domain's default admission rate; null limit, period and burst remove
-- it. Callers hold the policy row (LockClaimPolicy), which serializes the
-- write with every claim call.
update /*schema*/docket_claim_policy
   set rate_limit = sqlc.narg(rate_limit)::integer,
       rate_period = sqlc.narg(rate_period)::interval,
       rate_burst = sqlc.narg(rate_burst)::integer,
       policy_version = policy_version + 1,
       updated_at = now()
 where id = 1
returning *;

-- name: PutClaimPartitionRate :one
-- A partition's own rate (limit, period and burst), its exemption from the
-- default (rate_unlimited), or neither (all null and false: it inherits the
-- default). The stored rate time is kept: the new rate spaces the next
-- promotion from it.
update /*schema*/docket_claim_partitions
   set rate_limit = sqlc.narg(rate_limit)::integer,
       rate_period = sqlc.narg(rate_period)::interval,
       rate_burst = sqlc.narg(rate_burst)::integer,
       rate_unlimited = sqlc.arg(rate_unlimited)::boolean,
       partition_version = partition_version + 1,
       updated_at = now()
 where scope_key = sqlc.arg(scope_key)
returning *;

-- name: WakeRateParkedPartitions :execrows
-- After a rate write, the parked partitions it may concern that hold queued
-- work wake (one scope, or every one for the domain's default): a
-- rate_limited visit parked them until a token the new rate may bring
-- sooner. A partition the new rate still limits, or whose queued work is
-- not due yet, parks again at its next visit.
update /*schema*/docket_claim_schedule s
   set parked_until = null
 where s.parked_until is not null and s.in_ring
   and (sqlc.narg(scope_key)::text is null or s.scope_key = sqlc.narg(scope_key)::text)
   and exists (select from /*schema*/docket_runs r
                where r.scope_key = s.scope_key
                  and /*schema*/docket_run_unmarked_unclaimed(r));

-- name: PutClaimPolicyPaused :one
-- A queue-wide pause or resume; it moves the policy version like every
-- write of the policy row. Callers hold the row (LockClaimPolicy), which
-- serializes the write with every TenantFair claim call (a Legacy call
-- shares the row, so it waits for the write too).
update /*schema*/docket_claim_policy
   set paused = sqlc.arg(paused)::boolean,
       policy_version = policy_version + 1,
       updated_at = now()
 where id = 1
returning *;

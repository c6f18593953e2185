-- name: ListDomainRuns :many
-- The first page of an operator listing across every scope, newest first.
-- docket_runs_list_idx leads with scope_key, so no index serves this order:
-- it is a top-N sort over the filtered rows, acceptable for operator tooling
-- and never on a worker path. A scoped listing uses ListRuns instead.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(phase)::text is null or /*schema*/docket_run_phase(r, now()) = sqlc.narg(phase)::text)
 order by r.started_at desc, r.run_id desc
 limit sqlc.arg(page_limit);

-- name: ListDomainRunsAfter :many
-- A later page across every scope, strictly after the (started_at, run_id)
-- cursor; run_id is unique across scopes, so the keyset is total.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where (r.started_at, r.run_id) < (sqlc.arg(after_started_at)::timestamptz, sqlc.arg(after_run_id)::text)
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(phase)::text is null or /*schema*/docket_run_phase(r, now()) = sqlc.narg(phase)::text)
 order by r.started_at desc, r.run_id desc
 limit sqlc.arg(page_limit);

-- name: ListClaimPartitionScopes :many
-- One page of partition scope keys in key order, strictly after a cursor key,
-- served by docket_claim_partitions_pkey. '' (tenantless) sorts first, so the
-- first page passes a null cursor rather than ''.
select scope_key from /*schema*/docket_claim_partitions
 where sqlc.narg(after_scope_key)::text is null or scope_key > sqlc.narg(after_scope_key)::text
 order by scope_key
 limit sqlc.arg(page_limit);

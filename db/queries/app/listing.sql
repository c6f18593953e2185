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

-- name: SearchRuns :many
-- One page of the runs whose run id starts with a prefix, across every scope
-- or of one, in run id byte order: one range of docket_runs_run_id_prefix_idx
-- (run_id in the "C" collation), from the prefix (or strictly after the cursor id, ''
-- on the first page; the index scan starts at the greater of the two lower
-- bounds) up to the prefix's successor, the first string above every string
-- that starts with it, which the caller computes. The other filters are
-- checked on the rows of that range only, each written as a case: the
-- planner estimates an "(arg is null or column = arg)" filter to keep a
-- two-hundredth of the rows in a generic plan (the one a cached statement
-- may settle on), which made it fetch and sort the prefix's whole range
-- (a second for 200,000 matches); a case is estimated to keep half, and the
-- plan walks the range in order and stops at the page's end.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.run_id collate "C" >= sqlc.arg(prefix)::text
   and r.run_id collate "C" < sqlc.arg(prefix_end)::text
   and r.run_id collate "C" > sqlc.arg(after_run_id)::text
   and case when sqlc.narg(scope_key)::text is null then true else r.scope_key = sqlc.narg(scope_key)::text end
   and case when sqlc.narg(graph_id)::text is null then true else r.graph_id = sqlc.narg(graph_id)::text end
   and case when sqlc.narg(status)::text is null then true else r.status = sqlc.narg(status)::text end
   and case when sqlc.narg(phase)::text is null then true
            else /*schema*/docket_run_phase(r, now()) = sqlc.narg(phase)::text end
 order by r.run_id collate "C"
 limit sqlc.arg(page_limit);

-- name: ListQueuedRuns :many
-- The first page of the queued runs of every scope in admission order, the
-- order in which each tenant's FIFO admits them: (wake_at, id), oldest
-- first, served by docket_runs_ready_idx, whose predicate the spelled-out
-- unclaimed, unadmitted state implies. Such a due row's phase is queued or,
-- for a paused tenant, paused: the phase check drops the latter. It is
-- written as "<> 'paused'", which the planner estimates to keep nearly every
-- row (as it does), so a page walks the index in order and stops at the
-- limit; "= 'queued'" would be estimated to keep few and be planned as a
-- sort of every queued row, calling the phase function on each.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.status = 'running' and r.poisoned_at is null and r.claim_token is null
   and r.tenant_admitted_at is null and r.wake_at <= now()
   and /*schema*/docket_run_phase(r, now()) <> 'paused'
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 order by r.wake_at, r.id
 limit sqlc.arg(page_limit);

-- name: ListQueuedRunsAfter :many
-- A later page of ListQueuedRuns, strictly after the cursor run's (wake_at,
-- id) as an index condition; a cursor run deleted since continues after
-- its due time.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.status = 'running' and r.poisoned_at is null and r.claim_token is null
   and r.tenant_admitted_at is null and r.wake_at <= now()
   and (r.wake_at, r.id) > (sqlc.arg(after_wake_at)::timestamptz,
                            (select c.id from /*schema*/docket_runs c where c.run_id = sqlc.arg(after_run_id)::text))
   and /*schema*/docket_run_phase(r, now()) <> 'paused'
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 order by r.wake_at, r.id
 limit sqlc.arg(page_limit);

-- name: ListScopeQueuedRuns :many
-- The first page of one scope's queued runs in its FIFO's order, (wake_at,
-- id), the order promotion admits them, served by docket_runs_queued_ready_idx.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text
   and r.status = 'running' and r.poisoned_at is null and r.claim_token is null
   and r.tenant_admitted_at is null and r.wake_at <= now()
   and /*schema*/docket_run_phase(r, now()) <> 'paused'
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 order by r.wake_at, r.id
 limit sqlc.arg(page_limit);

-- name: ListScopeQueuedRunsAfter :many
-- A later page of ListScopeQueuedRuns, as ListQueuedRunsAfter continues.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text
   and r.status = 'running' and r.poisoned_at is null and r.claim_token is null
   and r.tenant_admitted_at is null and r.wake_at <= now()
   and (r.wake_at, r.id) > (sqlc.arg(after_wake_at)::timestamptz,
                            (select c.id from /*schema*/docket_runs c where c.run_id = sqlc.arg(after_run_id)::text))
   and /*schema*/docket_run_phase(r, now()) <> 'paused'
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 order by r.wake_at, r.id
 limit sqlc.arg(page_limit);

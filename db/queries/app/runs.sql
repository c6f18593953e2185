-- name: InsertRun :one
-- One new running run. The statement trigger on docket_runs creates the owner
-- partition inside this statement, so a rollback of the caller's transaction
-- leaves neither behind. A duplicate run_id inserts nothing and returns no row
-- instead of raising, which keeps the caller's transaction usable. The trace
-- context travels as text so every execution mode sends it alike.
insert into /*schema*/docket_runs as r (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, trace_context)
values (sqlc.arg(run_id), sqlc.narg(tenant_id), sqlc.arg(graph_id), sqlc.arg(graph_hash),
        'running', sqlc.arg(state)::text::jsonb, coalesce(sqlc.narg(wake_at)::timestamptz, now()),
        sqlc.narg(trace_context)::text::jsonb)
on conflict (run_id) do nothing
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase;

-- name: InsertRuns :execrows
-- A batch of new running runs in one statement, so a large backlog costs one
-- partition and counter write per scope. Scope keys map back to tenant ids
-- ('' is tenantless). Parallel unnests in one select list zip the arrays and
-- yield rows in array order, so ids follow the input order, which is the FIFO
-- tie-break among equal wake times. A duplicate run_id fails the whole
-- statement. Go's zero time (0001-01-01 UTC) stands for "due now", since a
-- timestamptz array cannot carry NULL through the generated binding. One call
-- has one inserting span, so the trace context is one value for every run.
insert into /*schema*/docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, trace_context)
select b.run_id, nullif(b.scope_key, ''), b.graph_id, b.graph_hash, 'running', b.state::jsonb,
       coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
       sqlc.narg(trace_context)::text::jsonb
  from (select unnest(sqlc.arg(run_ids)::text[]) as run_id,
               unnest(sqlc.arg(scope_keys)::text[]) as scope_key,
               unnest(sqlc.arg(graph_ids)::text[]) as graph_id,
               unnest(sqlc.arg(graph_hashes)::text[]) as graph_hash,
               unnest(sqlc.arg(states)::text[]) as state,
               unnest(sqlc.arg(wake_ats)::timestamptz[]) as wake_at) b;

-- name: GetRun :one
-- The scope predicate is part of the lookup, so another owner's run is
-- indistinguishable from a missing one. The phase is read at the statement's
-- clock, from the one definition every reader of runs calls.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id);

-- name: InspectRun :one
-- The run plus the database clock that derives its admission state, read in
-- one snapshot.
select sqlc.embed(r), now()::timestamptz as observed_at,
       /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id);

-- name: ListRuns :many
-- The first page, newest first, served by docket_runs_list_idx; the scope
-- predicate is never optional. The phase filter is checked per row walked in
-- that order, so a rare phase walks further into the scope's runs (at most
-- all of them), never into another scope's.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(phase)::text is null or /*schema*/docket_run_phase(r, now()) = sqlc.narg(phase)::text)
 order by r.started_at desc, r.run_id desc
 limit sqlc.arg(page_limit);

-- name: ListRunsAfter :many
-- A later page: strictly after the (started_at, run_id) keyset cursor. It is
-- a separate statement so the cursor is always an index condition, even in a
-- cached generic plan, instead of a filter over every earlier row.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text
   and (r.started_at, r.run_id) < (sqlc.arg(after_started_at)::timestamptz, sqlc.arg(after_run_id)::text)
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(phase)::text is null or /*schema*/docket_run_phase(r, now()) = sqlc.narg(phase)::text)
 order by r.started_at desc, r.run_id desc
 limit sqlc.arg(page_limit);

-- name: OlderQueuedRuns :one
-- The queued runs of a scope ahead of one run in its FIFO: TenantFair
-- promotes a scope's queued runs in (wake_at, id) order only.
select count(*)::bigint as older
  from /*schema*/docket_runs o
  join /*schema*/docket_runs r on r.scope_key = o.scope_key
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   and /*schema*/docket_run_unmarked_unclaimed(o) and o.wake_at <= now()
   and (o.wake_at, o.id) < (r.wake_at, r.id);

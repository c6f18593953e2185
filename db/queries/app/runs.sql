-- name: InsertRun :one
-- One new running run. The statement trigger on docket_runs creates the owner
-- partition inside this statement, so a rollback of the caller's transaction
-- leaves neither behind. A duplicate run_id, or a unique key another run of
-- the scope holds in the same period bucket (docket_runs_unique_idx), inserts
-- nothing and returns no row instead of raising, which keeps the caller's
-- transaction usable. A null unique_key inserts a run without one; with a
-- key, a null unique_period_us means one bucket of all time and null
-- unique_statuses the unfinished statuses (running and waiting). The trace
-- context travels as text so every execution mode sends it alike. A null
-- max_attempts leaves the Worker's retry policy in charge; the table's check
-- refuses one below 1.
insert into /*schema*/docket_runs as r (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, trace_context,
                                        unique_key, unique_bucket, unique_statuses, max_attempts)
values (sqlc.arg(run_id), sqlc.narg(tenant_id), sqlc.arg(graph_id), sqlc.arg(graph_hash),
        'running', sqlc.arg(state)::text::jsonb, coalesce(sqlc.narg(wake_at)::timestamptz, now()),
        sqlc.narg(trace_context)::text::jsonb,
        sqlc.narg(unique_key)::text,
        case when sqlc.narg(unique_key)::text is not null
             then /*schema*/docket_unique_bucket(coalesce(sqlc.narg(wake_at)::timestamptz, now()), sqlc.narg(unique_period_us)::bigint) end,
        case when sqlc.narg(unique_key)::text is not null
             then coalesce(sqlc.narg(unique_statuses)::text[], array['running', 'waiting']) end,
        sqlc.narg(max_attempts)::integer)
on conflict do nothing
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
-- A unique key of '' inserts a run without one; with a key, a period of 0
-- means one bucket of all time and a status list of '' the unfinished
-- statuses, else it is the covered statuses separated by commas. A key
-- another run of the scope holds in the same bucket fails the whole
-- statement too (docket_runs_unique_idx); InsertUniqueRuns skips it instead.
-- A max attempts of 0 stands for none (the Worker's retry policy decides),
-- as an integer array cannot carry NULL through the generated binding
-- either; an array shorter than the others, or none, leaves the rest
-- without one. The table's check refuses a negative one.
insert into /*schema*/docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, trace_context,
                                   unique_key, unique_bucket, unique_statuses, max_attempts)
select b.run_id, nullif(b.scope_key, ''), b.graph_id, b.graph_hash, 'running', b.state::jsonb,
       coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
       sqlc.narg(trace_context)::text::jsonb,
       nullif(b.unique_key, ''),
       case when b.unique_key <> ''
            then /*schema*/docket_unique_bucket(coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
                                                nullif(b.unique_period_us, 0)) end,
       case when b.unique_key <> ''
            then coalesce(string_to_array(nullif(b.unique_statuses, ''), ','), array['running', 'waiting']) end,
       nullif(b.max_attempts, 0)
  from (select unnest(sqlc.arg(run_ids)::text[]) as run_id,
               unnest(sqlc.arg(scope_keys)::text[]) as scope_key,
               unnest(sqlc.arg(graph_ids)::text[]) as graph_id,
               unnest(sqlc.arg(graph_hashes)::text[]) as graph_hash,
               unnest(sqlc.arg(states)::text[]) as state,
               unnest(sqlc.arg(wake_ats)::timestamptz[]) as wake_at,
               unnest(sqlc.arg(unique_keys)::text[]) as unique_key,
               unnest(sqlc.arg(unique_periods_us)::bigint[]) as unique_period_us,
               unnest(sqlc.arg(unique_statuses)::text[]) as unique_statuses,
               unnest(sqlc.arg(max_attempts)::integer[]) as max_attempts) b;

-- name: InsertUniqueRuns :execrows
-- InsertRuns for a batch with unique keys: a run whose key another run of
-- its scope holds in the same bucket, inserted before or earlier in this
-- batch, is skipped without raising, and the count says how many runs went
-- in. The skip is a speculative insertion of every row, which costs a large
-- batch about a tenth more time, so a batch without keys goes through
-- InsertRuns. The arrays and their encodings are InsertRuns' own.
insert into /*schema*/docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, trace_context,
                                   unique_key, unique_bucket, unique_statuses, max_attempts)
select b.run_id, nullif(b.scope_key, ''), b.graph_id, b.graph_hash, 'running', b.state::jsonb,
       coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
       sqlc.narg(trace_context)::text::jsonb,
       nullif(b.unique_key, ''),
       case when b.unique_key <> ''
            then /*schema*/docket_unique_bucket(coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
                                                nullif(b.unique_period_us, 0)) end,
       case when b.unique_key <> ''
            then coalesce(string_to_array(nullif(b.unique_statuses, ''), ','), array['running', 'waiting']) end,
       nullif(b.max_attempts, 0)
  from (select unnest(sqlc.arg(run_ids)::text[]) as run_id,
               unnest(sqlc.arg(scope_keys)::text[]) as scope_key,
               unnest(sqlc.arg(graph_ids)::text[]) as graph_id,
               unnest(sqlc.arg(graph_hashes)::text[]) as graph_hash,
               unnest(sqlc.arg(states)::text[]) as state,
               unnest(sqlc.arg(wake_ats)::timestamptz[]) as wake_at,
               unnest(sqlc.arg(unique_keys)::text[]) as unique_key,
               unnest(sqlc.arg(unique_periods_us)::bigint[]) as unique_period_us,
               unnest(sqlc.arg(unique_statuses)::text[]) as unique_statuses,
               unnest(sqlc.arg(max_attempts)::integer[]) as max_attempts) b
on conflict (scope_key, unique_key, coalesce(unique_bucket, '-infinity'::timestamptz)) where unique_key is not null do nothing;

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

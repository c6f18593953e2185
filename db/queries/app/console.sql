-- name: ConsoleDomainSummary :one
-- The cursor and ring sizes of the domain. The ring and parked counts are
-- index-only scans of the partial indexes that define them. Like every
-- query of this file (the operator console's), it neither locks nor writes.
select pol.scan_ring_position,
       (select count(*) from /*schema*/docket_claim_partitions)::bigint as partitions,
       (select count(*) from /*schema*/docket_claim_schedule s
         where s.in_ring)::bigint as ring_size,
       (select count(*) from /*schema*/docket_claim_schedule s
         where s.parked_until is not null)::bigint as parked
  from /*schema*/docket_claim_policy pol
 where pol.id = 1;

-- name: ConsoleActivity :many
-- Counts by minute over the last 15 minutes (the current minute included).
-- docket_runs keeps only the latest of each time, so "claimed" counts claims
-- still held (by claimed_at, served by docket_runs_expired_idx), "finished"
-- counts runs that finished (finished_at) and "updated" counts runs whose
-- latest write (claim, commit, signal) fell in the minute (updated_at). The
-- last two share one sequential scan, since every finish is also a write.
with win as (
    select date_trunc('minute', now()) - interval '14 minutes' as since
), claims as (
    select date_trunc('minute', r.claimed_at) as minute, count(*) as n
      from /*schema*/docket_runs r, win
     where /*schema*/docket_run_claimed(r) and r.claimed_at >= win.since
     group by 1
), recent as materialized (
    select r.finished_at, r.updated_at
      from /*schema*/docket_runs r, win
     where r.updated_at >= win.since
), finishes as (
    select date_trunc('minute', finished_at) as minute, count(*) as n
      from recent, win
     where finished_at >= win.since
     group by 1
), updates as (
    select date_trunc('minute', updated_at) as minute, count(*) as n
      from recent
     group by 1
)
select g.minute::timestamptz as minute,
       coalesce(c.n, 0)::bigint as claimed,
       coalesce(f.n, 0)::bigint as finished,
       coalesce(u.n, 0)::bigint as updated
  from win,
       generate_series(win.since, date_trunc('minute', now()), interval '1 minute') as g(minute)
  left join claims c on c.minute = g.minute
  left join finishes f on f.minute = g.minute
  left join updates u on u.minute = g.minute
 order by g.minute;

-- name: ConsoleTenantsByScope :many
-- One page of partitions in scope key order after a cursor key, walked on
-- docket_claim_partitions_pkey; the filters are checked per walked row, so a
-- filter that matches few partitions walks further (at most every partition).
select p.scope_key, 0::bigint as sort_value
  from /*schema*/docket_claim_partitions p
  join /*schema*/docket_claim_schedule s on s.scope_key = p.scope_key
  cross join /*schema*/docket_claim_policy pol
 where pol.id = 1
   and (sqlc.narg(after_scope_key)::text is null or p.scope_key > sqlc.narg(after_scope_key)::text)
   and (sqlc.narg(prefix)::text is null or starts_with(p.scope_key, sqlc.narg(prefix)::text))
   and (sqlc.narg(state)::text is null
        or (sqlc.narg(state)::text = 'empty' and s.unfinished_count = 0)
        or (sqlc.narg(state)::text = 'parked' and s.parked_until is not null)
        or (sqlc.narg(state)::text = 'queued' and exists (
              select 1 from /*schema*/docket_runs r
               where r.scope_key = p.scope_key
                 and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()))
        or (sqlc.narg(state)::text = 'capped' and (
              select count(*) from /*schema*/docket_runs r
               where r.scope_key = p.scope_key
                 and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))) >= coalesce(p.max_active, pol.max_active)))
 order by p.scope_key
 limit sqlc.arg(page_limit);

-- name: ConsoleTenantsByUnfinished :many
-- One page of partitions by unfinished count (most first, then scope key)
-- after a (count, key) cursor. No index orders docket_claim_schedule by its
-- count, so every page is one scan of the schedule with a top-N sort: its
-- cost grows with the number of partitions, not with the page's depth.
select p.scope_key, s.unfinished_count as sort_value
  from /*schema*/docket_claim_partitions p
  join /*schema*/docket_claim_schedule s on s.scope_key = p.scope_key
  cross join /*schema*/docket_claim_policy pol
 where pol.id = 1
   and (sqlc.narg(after_scope_key)::text is null
        or s.unfinished_count < sqlc.arg(after_value)::bigint
        or (s.unfinished_count = sqlc.arg(after_value)::bigint and p.scope_key > sqlc.narg(after_scope_key)::text))
   and (sqlc.narg(prefix)::text is null or starts_with(p.scope_key, sqlc.narg(prefix)::text))
   and (sqlc.narg(state)::text is null
        or (sqlc.narg(state)::text = 'empty' and s.unfinished_count = 0)
        or (sqlc.narg(state)::text = 'parked' and s.parked_until is not null)
        or (sqlc.narg(state)::text = 'queued' and exists (
              select 1 from /*schema*/docket_runs r
               where r.scope_key = p.scope_key
                 and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()))
        or (sqlc.narg(state)::text = 'capped' and (
              select count(*) from /*schema*/docket_runs r
               where r.scope_key = p.scope_key
                 and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))) >= coalesce(p.max_active, pol.max_active)))
 order by s.unfinished_count desc, p.scope_key
 limit sqlc.arg(page_limit);

-- name: ConsoleTenantsByQueued :many
-- One page of partitions by queued count (most first, then scope key) after
-- a (count, key) cursor. The counts come from one pass over every queued row
-- (docket_runs_queued_ready_idx can serve it), joined to every partition: the
-- cost grows with partitions plus queued runs, not with the page's depth.
with queued as (
    select r.scope_key, count(*) as n
      from /*schema*/docket_runs r
     where /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()
     group by r.scope_key
), ranked as (
    select p.scope_key, coalesce(q.n, 0)::bigint as sort_value,
           p.max_active, s.unfinished_count, s.parked_until
      from /*schema*/docket_claim_partitions p
      join /*schema*/docket_claim_schedule s on s.scope_key = p.scope_key
      left join queued q on q.scope_key = p.scope_key
)
select k.scope_key, k.sort_value
  from ranked k
  cross join /*schema*/docket_claim_policy pol
 where pol.id = 1
   and (sqlc.narg(after_scope_key)::text is null
        or k.sort_value < sqlc.arg(after_value)::bigint
        or (k.sort_value = sqlc.arg(after_value)::bigint and k.scope_key > sqlc.narg(after_scope_key)::text))
   and (sqlc.narg(prefix)::text is null or starts_with(k.scope_key, sqlc.narg(prefix)::text))
   and (sqlc.narg(state)::text is null
        or (sqlc.narg(state)::text = 'empty' and k.unfinished_count = 0)
        or (sqlc.narg(state)::text = 'parked' and k.parked_until is not null)
        or (sqlc.narg(state)::text = 'queued' and k.sort_value > 0)
        or (sqlc.narg(state)::text = 'capped' and (
              select count(*) from /*schema*/docket_runs r
               where r.scope_key = k.scope_key
                 and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))) >= coalesce(k.max_active, pol.max_active)))
 order by k.sort_value desc, k.scope_key
 limit sqlc.arg(page_limit);

-- name: ConsoleTenantsByDebt :many
-- One page of partitions by debt (admitted beyond the effective cap, most
-- first, then scope key) after a (debt, key) cursor. The admitted counts come
-- from one pass over the admitted rows (the indexes of the two admitted
-- pages, unclaimed and claimed, serve it), joined to every partition: the
-- cost grows with partitions plus admitted runs, not with the page's depth.
with admitted as (
    select r.scope_key, count(*) as n
      from /*schema*/docket_runs r
     where (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))
     group by r.scope_key
), ranked as (
    select p.scope_key,
           greatest(coalesce(a.n, 0) - coalesce(p.max_active, pol.max_active, coalesce(a.n, 0)), 0)::bigint as sort_value,
           coalesce(a.n, 0) >= coalesce(p.max_active, pol.max_active) as capped,
           s.unfinished_count, s.parked_until
      from /*schema*/docket_claim_partitions p
      join /*schema*/docket_claim_schedule s on s.scope_key = p.scope_key
      cross join /*schema*/docket_claim_policy pol
      left join admitted a on a.scope_key = p.scope_key
     where pol.id = 1
)
select k.scope_key, k.sort_value
  from ranked k
 where (sqlc.narg(after_scope_key)::text is null
        or k.sort_value < sqlc.arg(after_value)::bigint
        or (k.sort_value = sqlc.arg(after_value)::bigint and k.scope_key > sqlc.narg(after_scope_key)::text))
   and (sqlc.narg(prefix)::text is null or starts_with(k.scope_key, sqlc.narg(prefix)::text))
   and (sqlc.narg(state)::text is null
        or (sqlc.narg(state)::text = 'empty' and k.unfinished_count = 0)
        or (sqlc.narg(state)::text = 'parked' and k.parked_until is not null)
        or (sqlc.narg(state)::text = 'queued' and exists (
              select 1 from /*schema*/docket_runs r
               where r.scope_key = k.scope_key
                 and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()))
        or (sqlc.narg(state)::text = 'capped' and k.capped))
 order by k.sort_value desc, k.scope_key
 limit sqlc.arg(page_limit);

-- name: ConsoleLastGrants :many
-- The latest admission among each scope's currently admitted runs, served by
-- the indexes of the two admitted pages (unclaimed and claimed): a page's
-- scopes only, never the whole domain.
select r.scope_key, max(r.tenant_admitted_at)::timestamptz as last_granted_at
  from /*schema*/docket_runs r
 where r.scope_key = any(sqlc.arg(scope_keys)::text[])
   and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))
 group by r.scope_key;

-- name: ConsoleTenantExtras :many
-- What the tenants page adds to each of a page's scopes, never the whole
-- domain: its failed runs that retention has not deleted yet, counted on
-- docket_runs_list_idx (which leads with the scope), and the head of its
-- queue, the first entry of docket_runs_queued_ready_idx for the scope, which
-- is the queued due run admission takes first. The head has waited since the
-- later of its wake_at and its insert time (a run inserted with a wake time
-- already past has waited only since its insert); its age is taken on the
-- database's clock so it matches the now() that decides what is due.
-- Without a queue has_queued is false and the two columns after it read now
-- and 0, since sqlc types a cast column as never null.
select k.scope_key::text as scope_key,
       (select count(*) from /*schema*/docket_runs r
         where r.scope_key = k.scope_key and r.status = 'failed')::bigint as failed_runs,
       (h.queued_since is not null)::boolean as has_queued,
       coalesce(h.queued_since, now())::timestamptz as queued_since,
       coalesce(floor(extract(epoch from now() - h.queued_since)), 0)::bigint as queued_age_seconds
  from unnest(sqlc.arg(scope_keys)::text[]) as k(scope_key)
  left join lateral (
      select greatest(r.wake_at, r.inserted_at) as queued_since
        from /*schema*/docket_runs r
       where r.scope_key = k.scope_key
         and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()
       order by r.wake_at, r.id
       limit 1) h on true;

-- name: ConsoleRingStart :one
-- The first position of a window that ends at or before a position and holds
-- up to a given number of positions, walked backwards on
-- docket_claim_schedule_ring_position_key, and how many positions it holds
-- (fewer than asked near the ring's start). 0 (no position is 0) when nothing
-- lies there.
select coalesce(min(w.ring_position), 0)::bigint as ring_position,
       count(*)::bigint as positions
  from (select s.ring_position from /*schema*/docket_claim_schedule s
         where s.ring_position <= sqlc.arg(at_or_before)::bigint
         order by s.ring_position desc
         limit sqlc.arg(window_size)) w;

-- name: ConsoleRingWindow :many
-- Up to a page of ring positions from a position on, in ring order, walked on
-- docket_claim_schedule_ring_position_key, with what colours each: its counts
-- (through the per-scope partial indexes) and its effective cap.
select s.ring_position, s.scope_key, s.unfinished_count,
       (s.parked_until is not null)::boolean as parked, (p.paused or pol.paused)::boolean as paused,
       coalesce(p.max_active, pol.max_active) as effective_max_active,
       exists (select 1 from /*schema*/docket_runs r
                where r.scope_key = s.scope_key
                  and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()) as has_queued,
       exists (select 1 from /*schema*/docket_runs r
                where r.scope_key = s.scope_key
                  and /*schema*/docket_run_marked_unclaimed(r) and r.wake_at <= now()) as has_admitted_ready,
       (select count(*) from /*schema*/docket_runs r
         where r.scope_key = s.scope_key
           and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r)))::bigint as admitted
  from /*schema*/docket_claim_schedule s
  join /*schema*/docket_claim_partitions p on p.scope_key = s.scope_key
  cross join /*schema*/docket_claim_policy pol
 where pol.id = 1 and s.ring_position >= sqlc.arg(from_position)::bigint
 order by s.ring_position
 limit sqlc.arg(page_limit);

-- name: ConsoleRunPhaseCounts :many
-- Runs by status and phase across every scope, under the runs page's
-- filters (each null selects all; the start bounds are from inclusive,
-- before exclusive). No index serves a count over every scope: one
-- sequential scan, acceptable for an operator page and never on a worker
-- path. The status column lets one scan serve the domain page's status
-- counts too.
select r.status, /*schema*/docket_run_phase(r, now())::text as phase, count(*)::bigint as runs
  from /*schema*/docket_runs r
 where (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 group by 1, 2
 order by 1, 2;

-- name: ConsoleScopeRunPhaseCounts :many
-- Runs of one scope by status and phase under the same filters; the scope
-- predicate is always an index condition of docket_runs_list_idx, so the
-- count reads that scope's runs only.
select r.status, /*schema*/docket_run_phase(r, now())::text as phase, count(*)::bigint as runs
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text
   and (sqlc.narg(graph_id)::text is null or r.graph_id = sqlc.narg(graph_id)::text)
   and (sqlc.narg(status)::text is null or r.status = sqlc.narg(status)::text)
   and (sqlc.narg(started_from)::timestamptz is null or r.started_at >= sqlc.narg(started_from)::timestamptz)
   and (sqlc.narg(started_before)::timestamptz is null or r.started_at < sqlc.narg(started_before)::timestamptz)
 group by 1, 2
 order by 1, 2;

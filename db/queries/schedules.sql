-- name: InsertSchedule :one
-- A new schedule. A name already used in its scope inserts nothing and
-- returns no row instead of raising, so the caller's answer is typed.
insert into /*schema*/docket_schedules (tenant_id, name, graph_id, graph_hash, state, cron_expr,
                              interval_seconds, time_zone, missed_ticks, next_tick_at)
values (sqlc.narg(tenant_id), sqlc.arg(name), sqlc.arg(graph_id), sqlc.arg(graph_hash),
        sqlc.arg(state)::text::jsonb, sqlc.narg(cron_expr), sqlc.narg(interval_seconds),
        sqlc.arg(time_zone), sqlc.arg(missed_ticks), sqlc.arg(next_tick_at))
on conflict (scope_key, name) do nothing
returning *;

-- name: LockSchedule :one
-- An operator edit's compare-and-set point. It waits for a tick being taken
-- on the row, so the edit decides on the advanced next tick.
select * from /*schema*/docket_schedules
 where scope_key = sqlc.arg(scope_key)::text and name = sqlc.arg(name)
   for update;

-- name: SetSchedulePaused :one
-- Pause or resume: a resume also moves the next tick past the resume time,
-- so the paused time produces no runs.
update /*schema*/docket_schedules
   set paused = sqlc.arg(paused)::boolean,
       paused_at = case when sqlc.arg(paused)::boolean then now() end,
       next_tick_at = sqlc.arg(next_tick_at),
       version = version + 1,
       updated_at = now()
 where id = sqlc.arg(id)
returning *;

-- name: DeleteSchedule :execrows
-- Runs the schedule inserted stay: they are ordinary runs.
delete from /*schema*/docket_schedules where id = sqlc.arg(id);

-- name: LockDueSchedules :many
-- The tick taker's batch, served by docket_schedules_due_idx. skip locked:
-- a row another taker holds is that taker's tick, so racing Workers split
-- the due schedules instead of queueing behind each other.
select * from /*schema*/docket_schedules
 where not paused and next_tick_at <= sqlc.arg(now)::timestamptz
 order by next_tick_at, id
 limit sqlc.arg(batch_limit)
   for update skip locked;

-- name: AdvanceSchedules :exec
-- Records the taken ticks of a batch in one statement; the rows are locked
-- by LockDueSchedules in the same transaction.
update /*schema*/docket_schedules s
   set next_tick_at = a.next_tick_at,
       last_tick_at = a.last_tick_at,
       updated_at = now()
  from (select unnest(sqlc.arg(ids)::bigint[]) as id,
               unnest(sqlc.arg(next_tick_ats)::timestamptz[]) as next_tick_at,
               unnest(sqlc.arg(last_tick_ats)::timestamptz[]) as last_tick_at) a
 where s.id = a.id;

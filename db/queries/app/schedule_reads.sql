-- name: GetSchedule :one
-- The scope predicate is part of the lookup, so another owner's schedule is
-- indistinguishable from a missing one.
select * from /*schema*/docket_schedules
 where scope_key = sqlc.arg(scope_key)::text and name = sqlc.arg(name);

-- name: ListSchedules :many
-- One page in (scope_key, name) order, served by the unique constraint's
-- index; the keyset cursor is always an index condition. A cursor of two
-- empty strings precedes every schedule, since names are never empty.
select * from /*schema*/docket_schedules
 where (sqlc.narg(scope_key)::text is null or scope_key = sqlc.narg(scope_key)::text)
   and (scope_key, name) > (sqlc.arg(after_scope_key)::text, sqlc.arg(after_name)::text)
 order by scope_key, name
 limit sqlc.arg(page_limit);

-- name: NextScheduleTick :one
-- The earliest tick of any unpaused schedule, the first entry of the due
-- index; no row when there is none.
select next_tick_at from /*schema*/docket_schedules
 where not paused
 order by next_tick_at, id
 limit 1;

-- name: ExistingRunIDs :many
-- The tick runs that already exist: a tick is inserted at most once even
-- when a schedule is removed and added again over the same ticks.
select run_id from /*schema*/docket_runs where run_id = any(sqlc.arg(run_ids)::text[]);

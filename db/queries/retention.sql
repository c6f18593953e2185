-- name: DeleteFinishedRuns :execrows
-- One retention batch: the oldest runs finished before the cutoff in the
-- given statuses, optionally of one scope, read in the order of
-- docket_runs_finished_idx (finished_at, id); the constant status list
-- lets the planner match that partial index. SKIP LOCKED passes over a row another transaction holds (a
-- retry or a signal deciding on it), so retention never waits on a lock and
-- never deletes a row whose fate is being decided; claims never lock finished
-- rows, so they never wait on retention either. Terminal rows are outside the
-- unfinished count, so the delete trigger changes no counter, and partition
-- and schedule rows are never touched: a scope keeps its ring position.
-- The ids come as one array, so the delete finds each row by its primary
-- key instead of joining the batch against the whole table.
delete from /*schema*/docket_runs r
 where r.id = any(array(select f.id from /*schema*/docket_runs f
                 where f.status in ('done', 'failed', 'cancelled')
                   and f.status = any(sqlc.arg(statuses)::text[])
                   and f.finished_at < sqlc.arg(finished_before)::timestamptz
                   and (sqlc.narg(scope_key)::text is null
                        or f.scope_key = sqlc.narg(scope_key)::text)
                 order by f.finished_at, f.id
                 limit sqlc.arg(batch_size)::integer
                   for update skip locked));


-- Schema V8: what operators read and what retention needs; the claim
-- engines are unchanged.
--
-- 1. docket_run_phase: a run's phase (queued, ready, executing, retrying,
--    scheduled, waiting, poisoned, done, failed, cancelled), one definition
--    that every reader of runs calls.
-- 2. The error history accepts the entry an operator's retry writes (kind
--    "retry"), so a retried run's history shows when and from which status
--    it was sent back before its attempts count from 1 again.
-- 3. docket_runs_finished_idx serves the retention batch, which otherwise
--    reads every row of the table to find the oldest finished ones.
--
-- Replacing the check takes an ACCESS EXCLUSIVE lock on docket_runs and
-- validates every row; with the index build, reads and writes of the table
-- wait until the migration commits, as any migration runs with the domain
-- stopped.

-- include docket_run_phase_v1.sql
create or replace function docket_run_phase(r docket_runs, observed_at timestamptz)
    returns text
    language plpgsql
    stable
    parallel safe
    set search_path from current
as $$
-- The one definition of a run's phase, read by every query that shows or
-- filters runs. The order of the branches is the precedence: a terminal
-- status first, then the external wait, the poison facts, a held claim,
-- and for an unclaimed running run when it is due and whether its tenant
-- admitted it. It reads nothing but its arguments.
begin
return case
    when r.status in ('done', 'failed', 'cancelled') then r.status
    when r.status = 'waiting' then 'waiting'
    when r.poisoned_at is not null then 'poisoned'
    when r.claim_token is not null then 'executing'
    -- Not due, and the last write was a failed attempt: the verdict commit
    -- appends the error entry and sets updated_at in one statement, so the
    -- newest entry's time equals updated_at exactly when nothing wrote the
    -- run since. An operator's retry entry is not a failed attempt.
    when r.wake_at > observed_at
         and jsonb_array_length(r.errors) > 0
         and r.errors -> -1 ->> 'kind' <> 'retry'
         and (r.errors -> -1 ->> 'at')::timestamptz = r.updated_at then 'retrying'
    when r.wake_at > observed_at then 'scheduled'
    when r.tenant_admitted_at is not null then 'ready'
    else 'queued'
end;
end
$$;
-- end include

alter table docket_runs
    drop constraint docket_runs_errors_entry_check,
    add constraint docket_runs_errors_entry_check
        check (not jsonb_path_exists(errors,
            '$[*] ? (@.type() != "object"
                     || !(@.attempt.type() == "number") || @.attempt < 1
                     || !(@.at.type() == "string")
                     || !(@.error.type() == "string")
                     || !(@.kind == "error" || @.kind == "panic"
                          || @.kind == "no_result" || @.kind == "invalid_result"
                          || @.kind == "retry"))'));

-- The retention batch's predicate and order, so each batch reads its rows
-- in index order and stops at the batch size.
create index docket_runs_finished_idx on docket_runs (finished_at, id)
    where status in ('done', 'failed', 'cancelled');


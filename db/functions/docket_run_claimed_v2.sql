-- A healthy run a holder claims (expired once its claimed_at is older than
-- the caller's cutoff).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
$$;

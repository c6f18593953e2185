-- A healthy run: running and not poisoned, so a claim call may lease it,
-- poison it or count its admission. The other derived run states
-- (docket_run_*) build on it.
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_healthy(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null
$$;

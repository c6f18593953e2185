-- An unclaimed run without an admission marker: its tenant's FIFO, the
-- queued-ready page once due (docket_runs_queued_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unmarked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_unclaimed(r) and r.tenant_admitted_at is null
$$;

-- A run that holds its tenant's admission marker, claimed or not: one of the
-- admitted runs a tenant's cap counts. It is the union of the two admitted
-- pages' states, so a statement that asks for it reads the two partial
-- indexes whose predicates they are (docket_runs_admitted_ready_idx and
-- docket_runs_admitted_claimed_idx) and no index of its own.
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_admitted(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_marked_unclaimed(r) or docket_run_marked_claimed(r)
$$;

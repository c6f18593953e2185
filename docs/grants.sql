-- Least-privilege grants for a Docket application role.
--
-- Run as the role that owns the Docket schema (the one that ran
-- `docket migrate up`), with psql variables naming the schema and the
-- application role:
--
--   psql "$DATABASE_URL" -v schema=docket -v role=docket_app -f docs/grants.sql
--
-- The application role is what dispatchers, workers, run writers and claim
-- policy tooling connect as. It must not own the schema: the owner can
-- disable the guard triggers, and the guards are what keep the unfinished
-- ring exact. See docs/operations.md, "Least privilege", for why each grant
-- is needed and what the role still cannot do.

-- Resolve the schema's objects.
grant usage on schema :"schema" to :"role";

-- Startup reads the applied migrations (schema version check).
grant select on :"schema".docket_schema_migrations to :"role";

-- Runs: insert, read, lifecycle updates, and the deletes of retention, which
-- every Worker runs by default (WorkerConfig.Retention; DeleteFinishedRuns,
-- `docket runs prune`). An application that keeps its role from deleting
-- runs revokes DELETE here, sets Retention.Off on its Workers and runs
-- retention as another role.
grant select, insert, update, delete on :"schema".docket_runs to :"role";
grant usage on sequence :"schema".docket_runs_id_seq to :"role";

-- The singleton policy: startup synchronization, the claim cursor (locked
-- FOR UPDATE and advanced by every claim call), admin default writes.
grant select, update on :"schema".docket_claim_policy to :"role";

-- Partitions: created with a tenant's first run or first override, locked
-- and epoch-advanced by claim calls, overrides written by admin calls.
grant select, insert, update on :"schema".docket_claim_partitions to :"role";

-- The unfinished ring. The row of a new partition and every counter change
-- are written by trigger functions, which are SECURITY INVOKER and so run
-- with the application role's privileges: the role needs INSERT and UPDATE
-- for them. A direct INSERT, counter write, position change or TRUNCATE by
-- the role itself is still refused by the guard triggers.
grant select, insert, update on :"schema".docket_claim_schedule to :"role";

-- Schedules of periodic runs: added, listed and edited by admin calls
-- (RemoveSchedule deletes), locked and advanced by every tick taker.
grant select, insert, update, delete on :"schema".docket_schedules to :"role";
grant usage on sequence :"schema".docket_schedules_id_seq to :"role";

-- Combined claims (schema V16, V17): a waiting claimer takes a ticket and
-- collects its delivery; the combiner reads, writes and expires deliveries,
-- reads the ticket sequence and, when a ticket was taken since the last
-- read of the markers, records it in docket_claim_tickets_read. The
-- waiters' markers are advisory locks, which need no grant, and pg_locks,
-- where the combiner reads them, is readable by every role.
grant select, insert, delete on :"schema".docket_claim_deliveries to :"role";
grant usage, select on sequence :"schema".docket_claim_tickets to :"role";
grant select, update on sequence :"schema".docket_claim_tickets_read to :"role";

-- The two claim engines. Trigger functions need no EXECUTE grant.
grant execute on function :"schema".docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean) to :"role";
grant execute on function :"schema".docket_legacy_claim(timestamptz, timestamptz, integer, integer, text, boolean) to :"role";
-- A TenantFair client's claims go through this one, which calls the
-- engine.
grant execute on function :"schema".docket_tenant_fair_claim_combined(timestamptz, timestamptz, integer, integer, text) to :"role";
-- Both engines call this one for their argument and transaction checks; a
-- SECURITY INVOKER function needs EXECUTE on what it calls.
grant execute on function :"schema".docket_claim_precheck(text, timestamptz, timestamptz, integer, integer, text, boolean) to :"role";
-- The Worker's verdicts.
grant execute on function :"schema".docket_commit_runs(text[], text[], text[], bigint[], integer[], text[], text[],
    text[], text[], timestamptz[], bigint[], text[], text[], text[]) to :"role";
-- Every read of runs computes their phase with this one.
grant execute on function :"schema".docket_run_phase(:"schema".docket_runs, timestamptz) to :"role";
-- The spacing of an admission rate, which the TenantFair engine and the
-- claim policy inspection compute.
grant execute on function :"schema".docket_rate_step(integer, interval) to :"role";
-- Every run insert, and the read of the run that holds a unique key,
-- computes the key's period bucket with this one.
grant execute on function :"schema".docket_unique_bucket(timestamptz, bigint) to :"role";
-- The derived run states, which the engines, the triggers and
-- the queries name; PostgreSQL inlines a function only for a role that may
-- execute it.
grant execute on function :"schema".docket_run_healthy(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_unclaimed(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_claimed(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_marked_unclaimed(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_unmarked_unclaimed(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_marked_claimed(:"schema".docket_runs) to :"role";
grant execute on function :"schema".docket_run_unmarked_claimed(:"schema".docket_runs) to :"role";

-- Hardening of the database around the grants above.
--
-- Functions are executable by PUBLIC by default; keep the claim engines to
-- the roles granted above.
revoke execute on all functions in schema :"schema" from public;
-- The counter guard tells a docket trigger from a client statement by
-- trigger nesting depth. A role that can create its own trigger (on a
-- temporary table, or on a table in a schema where it has CREATE) can nest
-- a counter write one level deeper and pass the guard. Take both away.
revoke temporary on database :"DBNAME" from public;
revoke create on schema public from public;

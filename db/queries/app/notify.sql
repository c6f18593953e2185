-- name: RunsDueChannel :one
-- The LISTEN channel of this fairness domain, named by the schema its
-- tables live in (the policy row's), whatever the session's search_path.
-- NOTIFY is already database scoped; the schema's digest keeps two domains
-- of one database apart and the name within PostgreSQL's 63-byte identifier
-- limit for any schema name. NotifyRunsDue and NotifyClaimRevoked build the
-- same name.
select ('docket_runs_due_' || md5(n.nspname::text))::text as channel
  from /*schema*/docket_claim_policy p
  join pg_catalog.pg_class c on c.oid = p.tableoid
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace;

-- name: NotifyRunsDue :exec
-- Tells listening workers of this domain that runs became due now. Inside a
-- transaction PostgreSQL delivers it at commit, folds duplicates into one and
-- drops it on rollback, so a worker never wakes for work it cannot see.
select pg_notify('docket_runs_due_' || md5(n.nspname::text), '')
  from /*schema*/docket_claim_policy p
  join pg_catalog.pg_class c on c.oid = p.tableoid
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace;

-- name: RunsDueChannel :one
-- The LISTEN channel of this fairness domain. NOTIFY is already database
-- scoped; the schema's digest keeps two domains of one database apart and the
-- name within PostgreSQL's 63-byte identifier limit for any schema name.
-- NotifyRunsDue and NotifyClaimRevoked must build the same name.
select ('docket_runs_due_' || md5(current_schema()))::text as channel;

-- name: NotifyRunsDue :exec
-- Tells listening workers of this domain that runs became due now. Inside a
-- transaction PostgreSQL delivers it at commit, folds duplicates into one and
-- drops it on rollback, so a worker never wakes for work it cannot see.
select pg_notify('docket_runs_due_' || md5(current_schema()), '');

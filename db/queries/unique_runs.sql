-- name: UniqueKeyHolder :one
-- The run of a scope that holds a unique key in the period bucket of a wake
-- time (now when null), read after an insert the key refused. The facade
-- reads it in the inserting transaction, where now() is the insert's own
-- clock, so the bucket is exactly the one the insert computed; a fresh
-- statement sees the holder a concurrent insert committed while this one
-- waited on the unique index.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text and r.unique_key = sqlc.arg(unique_key)::text
   and r.unique_bucket is not distinct from /*schema*/docket_unique_bucket(coalesce(sqlc.narg(wake_at)::timestamptz, now()),
                                                        sqlc.narg(unique_period_us)::bigint);

-- name: UniqueBatchHolders :many
-- For each unique run of a batch InsertRuns just wrote, in the inserting
-- transaction, in input order (ord counts from 1): inserted when the run
-- itself went in, else the id of the run that holds its key in its bucket,
-- or '' when no run holds it any more (the holder left its covered statuses
-- since the insert), which the facade inserts again. The arrays and their
-- encodings are InsertRuns' own.
select b.ord::integer as ord,
       (own.run_id is not null)::boolean as inserted,
       coalesce(holder.run_id, '')::text as holder_run_id
  from (select generate_subscripts(sqlc.arg(run_ids)::text[], 1) as ord,
               unnest(sqlc.arg(run_ids)::text[]) as run_id,
               unnest(sqlc.arg(scope_keys)::text[]) as scope_key,
               unnest(sqlc.arg(unique_keys)::text[]) as unique_key,
               unnest(sqlc.arg(wake_ats)::timestamptz[]) as wake_at,
               unnest(sqlc.arg(unique_periods_us)::bigint[]) as unique_period_us) b
  left join /*schema*/docket_runs own on own.run_id = b.run_id
  left join /*schema*/docket_runs holder
         on own.run_id is null
        and holder.scope_key = b.scope_key and holder.unique_key = b.unique_key
        and holder.unique_bucket is not distinct from /*schema*/docket_unique_bucket(
                coalesce(nullif(b.wake_at, '0001-01-01 00:00:00+00'::timestamptz), now()),
                nullif(b.unique_period_us, 0))
 order by b.ord;

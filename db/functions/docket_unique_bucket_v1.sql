-- The window a unique run's key holds in: the start of the period bucket
-- that holds at, buckets of period_us microseconds counted from the Unix
-- epoch (UTC), or null, the one window of all time, when period_us is null.
-- Every writer of unique_bucket and every reader looking for the run that
-- holds a key calls it, so they agree on the window to the microsecond. The
-- body names only built-in functions, so it means the same whatever the
-- calling session's search_path.
create or replace function docket_unique_bucket(at timestamptz, period_us bigint)
    returns timestamptz
    language sql
    stable
    parallel safe
as $$
select to_timestamp((e.us - ((e.us % period_us) + period_us) % period_us) / 1000000.0)
  from (select round(extract(epoch from at) * 1000000)::bigint as us) e
$$;

-- The window a unique run's key holds in: the start of the period bucket
-- that holds at, buckets of period_us microseconds counted from the Unix
-- epoch (UTC), or null, the one window of all time, when period_us is null.
-- Every writer of unique_bucket and every reader looking for the run that
-- holds a key calls it, so they agree on the window to the microsecond.
create or replace function docket_unique_bucket(at timestamptz, period_us bigint)
    returns timestamptz
    language plpgsql
    stable
    parallel safe
    security invoker
    set search_path from current
as $$
declare
    us bigint := round(extract(epoch from at) * 1000000)::bigint;
begin
    return to_timestamp((us - ((us % period_us) + period_us) % period_us) / 1000000.0);
end;
$$;

-- The spacing of a rate's promotions: period / limit, rounded up to the
-- microsecond (an interval's resolution), so a partition is never admitted
-- faster than its rate. The period is read in whole microseconds first:
-- extract returns a double on PostgreSQL 13, which need not hold 0.1 exactly.
-- Its body names no relation, so it means the same on any search_path.
create function docket_rate_step(p_limit integer, p_period interval)
    returns interval
    language sql
    immutable
    strict
    parallel safe
as $$
    select ((round(extract(epoch from p_period) * 1000000)::bigint + p_limit - 1) / p_limit)
           * interval '1 microsecond'
$$;

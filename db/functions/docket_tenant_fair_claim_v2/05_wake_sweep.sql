        -- Wake by time, before the walk so that this call already visits the
        -- partitions whose time has come. A row some writer holds is skipped
        -- rather than waited for (claim never waits on a schedule row) and
        -- stays due, so a later call unparks it, unless that writer wakes it
        -- itself (wake by write). Only claim calls park and
        -- sweep, and they serialize on the policy row, so no park can
        -- interleave with this statement.
        if v_park then
            -- statement wake_sweep
            with due as (
                select s.scope_key
                  from docket_claim_schedule s
                 where s.parked_until <= p_now
                 order by s.parked_until
                 limit c_wake_batch
                   for no key update skip locked
            )
            update docket_claim_schedule s
               set parked_until = null
             where s.scope_key = any (array(select d.scope_key from due d));
            -- end statement
            get diagnostics v_woken = row_count;
        end if;


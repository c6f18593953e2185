        -- An empty class counts as served; each probe reads the oldest
        -- entry of the ready or expired index.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;


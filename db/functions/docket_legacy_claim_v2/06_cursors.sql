        -- The domain's due rows by (wake_at, id), docket_runs_ready_idx.
        open v_ready_rows for
            -- statement ready_rows
            select r.id, r.wake_at, r.claim_attempts >= p_max_attempts, r.tenant_admitted_at is not null
              from docket_runs r
             where docket_run_unclaimed(r) and r.wake_at <= p_now
             order by r.wake_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement
        -- Its claims by (claimed_at, id), docket_runs_expired_idx.
        open v_expired_rows for
            -- statement expired_rows
            select r.id, r.claimed_at, r.claim_attempts >= p_max_attempts
              from docket_runs r
             where docket_run_claimed(r) and r.claimed_at < p_cutoff
             order by r.claimed_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement


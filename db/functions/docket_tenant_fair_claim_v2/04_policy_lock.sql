    <<claim>>
    begin
        -- A free policy row is taken without waiting, which keeps the
        -- uncontended call out of the subtransaction of an exception block;
        -- only a held row is waited for, within the lock wait the precheck
        -- set.
        -- statement policy_lock
        select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant,
               docket_rate_step(p.rate_limit, p.rate_period),
               docket_rate_step(p.rate_limit, p.rate_period) * p.rate_burst, p.paused
          into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park,
               v_default_rate_step, v_default_rate_tolerance, v_domain_paused
          from docket_claim_policy p
         where p.id = 1
           for update skip locked;
        -- end statement
        v_policy_found := found;
        if not v_policy_found then
            begin
                -- statement policy_wait
                select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant,
                       docket_rate_step(p.rate_limit, p.rate_period),
                       docket_rate_step(p.rate_limit, p.rate_period) * p.rate_burst, p.paused
                  into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park,
                       v_default_rate_step, v_default_rate_tolerance, v_domain_paused
                  from docket_claim_policy p
                 where p.id = 1
                   for update;
                -- end statement
                v_policy_found := found;
            exception when lock_not_available then
                v_error := 'lock_contention';
            end;
        end if;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode = 'legacy' and v_initialized_at is null then
                v_error := 'not_initialized';
            elsif v_mode is distinct from 'tenant_fair' then
                v_error := 'inactive_engine';
            elsif v_default_cap is null or v_default_cap < 1 or v_initialized_at is null
                    or v_cursor is null or v_cursor < 0 or v_park is null then
                v_error := 'malformed_policy';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;
        -- A paused domain (docket_claim_policy.paused, PauseDomain) admits
        -- and leases nothing: the call returns no row, visits nothing and
        -- leaves the cursor, the wake sweep and every partition as they are;
        -- holders of its claimed runs commit as usual. The engine interlock
        -- above still refuses a call through the inactive engine first.
        exit claim when v_domain_paused;


    <<claim>>
    begin
        -- A share lock is enough to exclude TenantFair, which takes the row
        -- for update, while Legacy callers still run side by side.
        begin
            -- statement policy_share
            select p.admission_mode, p.paused into v_mode, v_domain_paused
              from docket_claim_policy p
             where p.id = 1
               for share;
            -- end statement
            v_policy_found := found;
        exception when lock_not_available then
            v_error := 'lock_contention';
        end;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode is distinct from 'legacy' then
                v_error := 'inactive_engine';
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
        -- A paused domain (docket_claim_policy.paused) admits and leases
        -- nothing: the call returns no row, and its claimed runs commit as
        -- usual.
        exit claim when v_domain_paused;


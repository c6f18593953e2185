begin
    <<call>>
    begin
        v_precheck := docket_claim_precheck('docket_tenant_fair_claim_combined', p_now, p_cutoff,
                                            p_demand, p_max_attempts, p_preference, false);
        v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
        if v_precheck.o_error_reason is not null then
            row_kind := 'error';
            error_reason := v_precheck.o_error_reason;
            return next;
            exit call;
        end if;
        v_deadline := clock_timestamp() + current_setting('lock_timeout')::interval;


begin
    -- The same transaction contract as TenantFair, so neither engine can
    -- run where the other would refuse.
    v_precheck := docket_claim_precheck('docket_legacy_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;


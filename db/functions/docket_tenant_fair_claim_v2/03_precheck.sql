begin
    -- The argument checks, the transaction contract and the lock wait cap,
    -- shared with Legacy.
    v_precheck := docket_claim_precheck('docket_tenant_fair_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;


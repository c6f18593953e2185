-- The preamble both claim engines share, so that neither can accept a call
-- the other would refuse: the argument checks, the transaction contract and
-- the lock wait cap. p_engine is the calling engine's name, which starts
-- every error message as it did when each engine checked for itself.
--
-- A bad argument raises SQLSTATE 22023 (nothing has changed yet). A refused
-- transaction is returned as o_error_reason, the engine's error row. Else the
-- lock wait is capped at 250 ms unless the caller already waits less; the
-- cap is a transaction-local setting that outlives this function (only
-- settings named in a function's SET clauses are restored at its exit), and
-- o_restore_lock_timeout is the caller's value for the engine to restore
-- before it returns, null when it was kept.
create or replace function docket_claim_precheck(
    p_engine text,
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean,
    out o_error_reason text,
    out o_restore_lock_timeout text
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
as $$
declare
    c_lock_wait_ms constant numeric := 250;

    v_caller_lock_timeout text;
begin
    if p_now is null or p_cutoff is null or p_demand is null or p_max_attempts is null
            or p_trace is null then
        raise exception '%: arguments other than p_preference must not be null', p_engine
            using errcode = 'invalid_parameter_value';
    end if;
    if p_demand <= 0 or p_max_attempts <= 0 then
        raise exception '%: demand % and max attempts % must be positive',
                p_engine, p_demand, p_max_attempts
            using errcode = 'invalid_parameter_value';
    end if;
    if p_cutoff > p_now then
        raise exception '%: cutoff % is after now %', p_engine, p_cutoff, p_now
            using errcode = 'invalid_parameter_value';
    end if;
    if p_preference is not null and p_preference not in ('ready', 'expired') then
        raise exception '%: preference % is neither ready nor expired',
                p_engine, quote_literal(p_preference)
            using errcode = 'invalid_parameter_value';
    end if;

    -- Admission needs a writable Read Committed transaction: only then does
    -- every statement of an engine see a fresh snapshot after the lock it
    -- follows.
    if current_setting('transaction_read_only') = 'on' then
        o_error_reason := 'read_only_transaction';
        return;
    elsif current_setting('transaction_isolation') <> 'read committed' then
        o_error_reason := 'unsupported_isolation';
        return;
    end if;

    v_caller_lock_timeout := current_setting('lock_timeout');
    if extract(epoch from v_caller_lock_timeout::interval) * 1000 not between 1 and c_lock_wait_ms then
        perform set_config('lock_timeout', c_lock_wait_ms || 'ms', true);
        o_restore_lock_timeout := v_caller_lock_timeout;
    end if;
end;
$$;

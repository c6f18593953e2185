declare
    c_call_outcomes constant integer := 256;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_domain_paused boolean;
    v_error text;

    v_limit integer := least(p_demand, c_call_outcomes);
    v_remaining integer := least(p_demand, c_call_outcomes);
    v_served_ready boolean := true;
    v_served_expired boolean := true;
    v_ready_rows refcursor;
    v_expired_rows refcursor;
    v_have_ready boolean := false;
    v_have_expired boolean := false;
    v_ready_done boolean := false;
    v_expired_done boolean := false;
    v_ready_id bigint;
    v_ready_eligible timestamptz;
    v_ready_poison boolean;
    v_ready_marked boolean;
    v_expired_id bigint;
    v_expired_eligible timestamptz;
    v_expired_poison boolean;
    v_pick_ready boolean;
    v_take_ids bigint[] := '{}';
    v_take_kinds text[] := '{}';
    v_take_poison boolean[] := '{}';
    v_take_eligible timestamptz[] := '{}';
    v_call_token uuid;
    v_xid bigint;

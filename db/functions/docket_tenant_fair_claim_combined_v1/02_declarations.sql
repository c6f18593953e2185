declare
    -- The combined demand of one walk stays within what one engine call can
    -- grant (S = 32 visits of at most Q = 8 outcomes); waiters beyond it
    -- wait for the next combiner.
    c_combined_demand constant integer := 256;
    -- A marker's second key is ticket * 256 + demand, within an integer.
    c_marker_demand constant integer := 256;
    -- A waiter gives up within the lock wait (250 ms), so a delivery older
    -- than this belongs to a caller that is gone.
    c_delivery_life constant interval := '10 seconds';

    -- The combiner's lock, one per schema (advisory locks are per database).
    v_key bigint := hashtextextended('docket_tenant_fair_claim_combined ' || current_schema(), 0);
    -- The markers' first key: the schema and what a walk takes one of.
    v_kind integer := hashtext('docket_tenant_fair_claim_combined marker ' || current_schema()
                               || ' ' || (p_now - p_cutoff)::text || ' ' || p_max_attempts::text
                               || ' ' || coalesce(p_preference, ''));
    -- The served locks' first key; the second is the ticket.
    v_served integer := hashtext('docket_tenant_fair_claim_combined served ' || current_schema());
    v_precheck record;
    v_restore_lock_timeout text;
    v_deadline timestamptz;
    v_ticket integer;
    v_timed_out boolean := false;
    v_combiner boolean := false;
    v_lock_free boolean;
    v_own docket_claim_outcome[];
    v_markers integer[];
    v_issued integer;
    v_read integer;
    v_waiting integer;
    v_outcomes docket_claim_outcome[];

declare
    c_inspections constant integer := 32;
    c_grant_outcomes constant integer := 8;
    c_frozen constant integer := 16;
    -- A class whose head must be found freezes its first K / 4 rows ahead
    -- of the rest, so up to three rows held by other transactions can hand
    -- the head's place to the next; the other 8 frozen ids still cover the
    -- Q - 2 further outcomes the walk may take.
    c_class_reserve constant integer := 4;
    -- The first ring window of a call is this many positions, and never
    -- more than the demand left: a call that fills its demand within a few
    -- more visits probes few positions it never reaches, and a call over
    -- dormant positions reads the rest of its inspections as a second
    -- window.
    c_first_window constant integer := 4;
    -- The wake sweep unparks at most this many partitions per call: each is
    -- one schedule row update under the policy lock, so a call pays at most
    -- 64 extra row writes, and a burst of N simultaneous wakes is drained in
    -- ceil(N / 64) calls, earliest first.
    c_wake_batch constant integer := 64;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_default_cap integer;
    v_initialized_at timestamptz;
    v_park boolean;
    v_domain_paused boolean;
    -- The domain's default rate (docket_rate_step of its limit and period,
    -- and burst steps of tolerance); null steps mean no default rate.
    v_default_rate_step interval;
    v_default_rate_tolerance interval;
    v_error text;
    v_woken integer;
    v_park_probe bigint;
    v_parked boolean;
    v_parked_until timestamptz;

    v_call_token uuid;
    v_xid bigint;
    v_cursor bigint;
    v_remaining integer := p_demand;
    v_visit integer := 0;
    -- An empty class counts as served, so it never withholds a slot.
    v_served_ready boolean := true;
    v_served_expired boolean := true;

    v_position bigint;
    v_scope text;
    -- The current ring window in visit order: its positions, their scopes
    -- and whether the window's probe found a page; the next entry to visit;
    -- the visited entry (null for a stepped visit); and the last entry of the
    -- empty run whose partitions are locked, with the scopes it locked.
    v_window integer;
    v_win_positions bigint[] := '{}';
    v_win_scopes text[] := '{}';
    v_win_pages boolean[] := '{}';
    v_win_next integer := 1;
    v_win_index integer;
    v_run_end integer := 0;
    v_run_scopes text[];
    v_run_locked text[];
    v_run_paused text[];
    v_cursor_before bigint;
    v_override integer;
    v_paused boolean;
    v_has_page boolean;
    v_cap integer;
    -- The visited partition's rate: its spacing (null without a rate), its
    -- tolerance, its stored time on entry, and whether the FIFO head in turn
    -- met no token.
    v_part_rate_limit integer;
    v_part_rate_period interval;
    v_part_rate_burst integer;
    v_part_rate_unlimited boolean;
    v_rate_step interval;
    v_rate_tolerance interval;
    v_rate_tat timestamptz;
    v_rate_promoted integer;
    v_rate_denied boolean;
    v_token_at timestamptz;
    v_admitted bigint;
    v_limit integer;
    v_frozen integer;
    v_candidate record;
    v_class text;
    v_walk_served_ready boolean;
    v_walk_served_expired boolean;
    v_walk_remaining integer;
    v_queue_no integer;
    v_next_queue integer;
    v_lead boolean;
    v_lead_locked boolean;
    v_withheld boolean;
    v_no_slot boolean;
    v_take docket_claim_pending[];
    v_kept docket_claim_pending[];
    v_item docket_claim_pending;
    v_promote_ids bigint[];
    v_moved_ids bigint[];
    v_refused_ids bigint[];
    v_visit_outcomes integer;
    v_disposition text;

    -- Chosen but unwritten outcomes in call order, each with what its
    -- outcome row reports of its visit, and one scope entry per grant.
    v_pending docket_claim_pending[] := '{}';
    v_pending_grants text[] := '{}';
    -- Each grant's partition rate time after it, element for element.
    v_pending_tats timestamptz[] := '{}';
    v_written integer := 0;
    -- The full-ring walk steps until a visit ends without an outcome.
    v_stepping boolean := true;

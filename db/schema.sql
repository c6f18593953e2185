-- Docket's schema as migration 20261207000003 leaves it, dumped by make generate
-- from a freshly migrated database (public schema). Generated: do not edit;
-- change the migrations in db/schema and the sources in db/functions.

-- Name: docket_claim_outcome; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.docket_claim_outcome AS (
	row_kind text,
	error_reason text,
	run_id text,
	tenant_id text,
	graph_id text,
	graph_hash text,
	checkpoint_seq bigint,
	claim_token uuid,
	claimed_at timestamp with time zone,
	claim_attempt integer,
	poisoned_at timestamp with time zone,
	poison_reason text,
	work_class text,
	eligible_at timestamp with time zone
);

-- Name: docket_claim_pending; Type: TYPE; Schema: public; Owner: -

CREATE TYPE public.docket_claim_pending AS (
	id bigint,
	kind text,
	poison boolean,
	eligible timestamp with time zone,
	visit integer,
	cursor_before bigint,
	ring_position bigint,
	scope_key text
);

-- Name: docket_claim_partitions_guard(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_claim_partitions_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    if tg_op = 'UPDATE' then
        if new.scope_key is distinct from old.scope_key then
            raise exception 'docket: the scope_key of a claim partition is immutable'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if exists (select 1 from docket_runs r where r.scope_key = old.scope_key) then
        raise exception 'docket: claim partition % still owns runs', quote_literal(old.scope_key)
            using errcode = 'integrity_constraint_violation';
    end if;
    return old;
end;
$$;

-- Name: docket_claim_partitions_schedule(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_claim_partitions_schedule() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    insert into docket_claim_schedule (scope_key) values (new.scope_key);
    return null;
end;
$$;

-- Name: docket_claim_precheck(text, timestamp with time zone, timestamp with time zone, integer, integer, text, boolean); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_claim_precheck(p_engine text, p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean, OUT o_error_reason text, OUT o_restore_lock_timeout text) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
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

-- Name: docket_claim_schedule_guard(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_claim_schedule_guard() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    if tg_op = 'INSERT' then
        if pg_trigger_depth() < 2 or new.unfinished_count <> 0 then
            raise exception 'docket: schedule rows are created only by their claim partition'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if tg_op = 'DELETE' then
        if old.unfinished_count > 0 then
            raise exception 'docket: schedule row % still counts % unfinished runs',
                    quote_literal(old.scope_key), old.unfinished_count
                using errcode = 'integrity_constraint_violation';
        end if;
        return old;
    end if;

    if new.scope_key is distinct from old.scope_key
            or new.ring_position is distinct from old.ring_position then
        raise exception 'docket: schedule scope and ring position are immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    if new.unfinished_count is distinct from old.unfinished_count then
        if pg_trigger_depth() < 2 then
            raise exception 'docket: unfinished_count is maintained by triggers only'
                using errcode = 'integrity_constraint_violation';
        end if;
        if new.unfinished_count < 0 then
            raise exception 'docket: unfinished_count underflow for scope %', quote_literal(old.scope_key)
                using errcode = 'integrity_constraint_violation';
        end if;
    end if;
    return new;
end;
$$;

-- Name: docket_commit_runs(text[], text[], text[], bigint[], integer[], text[], text[], text[], text[], timestamp with time zone[], bigint[], text[], text[], text[]); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_commit_runs(p_scope_keys text[], p_run_ids text[], p_claim_tokens text[], p_expected_seqs bigint[], p_steps integer[], p_states text[], p_checkpoint_types text[], p_statuses text[], p_schedules text[], p_wake_ats timestamp with time zone[], p_wake_delays_us bigint[], p_attempt_changes text[], p_error_kinds text[], p_error_texts text[]) RETURNS TABLE(claim_token uuid, checkpoint_seq bigint, step integer, marker_cleared boolean)
    LANGUAGE plpgsql
    SET search_path TO 'public'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
#variable_conflict use_column
begin
    return query
    -- statement commit
    with batch as (
        select unnest(p_scope_keys) as scope_key,
               unnest(p_run_ids) as run_id,
               unnest(p_claim_tokens)::uuid as claim_token,
               unnest(p_expected_seqs) as expected_seq,
               unnest(p_steps) as step,
               unnest(p_states) as state,
               unnest(p_checkpoint_types) as checkpoint_type,
               unnest(p_statuses) as status,
               unnest(p_schedules) as schedule,
               unnest(p_wake_ats) as wake_at,
               unnest(p_wake_delays_us) as wake_delay_us,
               unnest(p_attempt_changes) as attempt_change,
               unnest(p_error_kinds) as error_kind,
               unnest(p_error_texts) as error_text
    ), prior as materialized (
        select r.id, r.tenant_admitted_at, b.claim_token, b.expected_seq, b.step,
               nullif(b.state, '') as state, nullif(b.checkpoint_type, '') as checkpoint_type,
               b.status, b.schedule, b.wake_at, b.wake_delay_us, b.attempt_change,
               nullif(b.error_kind, '') as error_kind, b.error_text
          from batch b
          join docket_runs r on r.scope_key = b.scope_key and r.run_id = b.run_id
         where r.claim_token = b.claim_token and r.checkpoint_seq = b.expected_seq
         order by r.scope_key, r.id
           for no key update of r
    )
    update docket_runs r
       set checkpoint_seq = r.checkpoint_seq + 1,
           state = coalesce(p.state::jsonb, r.state),
           step = p.step,
           latest_checkpoint_type = p.checkpoint_type,
           status = p.status,
           claim_token = case when p.schedule = 'retain' then r.claim_token end,
           claimed_at = case when p.schedule = 'retain' then greatest(r.claimed_at, now()) end,
           wake_at = case p.schedule
                         when 'immediate' then now()
                         when 'at' then p.wake_at
                         when 'after' then now() + interval '1 microsecond' * p.wake_delay_us
                     end,
           tenant_admitted_at = case when p.schedule in ('retain', 'immediate')
                                     then r.tenant_admitted_at end,
           finished_at = case when p.schedule = 'terminal' then now() end,
           claim_attempts = 0,
           claim_abandons = 0,
           attempt = case p.attempt_change
                         when 'count' then least(r.attempt::bigint + 1, 2147483647)::integer
                         when 'keep' then r.attempt
                         else 0
                     end,
           errors = case when p.error_kind is null then r.errors
                         else (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                              || jsonb_build_array(jsonb_build_object(
                                     'attempt', least(r.attempt::bigint + 1, 2147483647),
                                     'at', now(),
                                     'kind', p.error_kind,
                                     'error', p.error_text))
                     end,
           last_commit_token = p.claim_token,
           updated_at = now()
      from prior p
     where r.id = p.id
       and r.claim_token = p.claim_token
       and r.checkpoint_seq = p.expected_seq
    returning p.claim_token, r.checkpoint_seq, r.step,
              (p.tenant_admitted_at is not null and r.tenant_admitted_at is null);
    -- end statement
end
$$;

-- Name: docket_guard_truncate(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_guard_truncate() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    raise exception 'docket: TRUNCATE of % is refused; delete rows instead', tg_table_name
        using errcode = 'integrity_constraint_violation';
end;
$$;

-- Name: docket_legacy_claim(timestamp with time zone, timestamp with time zone, integer, integer, text, boolean); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_legacy_claim(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean) RETURNS TABLE(row_kind text, error_reason text, run_id text, tenant_id text, graph_id text, graph_hash text, checkpoint_seq bigint, claim_token uuid, claimed_at timestamp with time zone, claim_attempt integer, poisoned_at timestamp with time zone, poison_reason text, work_class text, eligible_at timestamp with time zone, call_token uuid, transaction_id bigint, visit_ordinal integer, outcome_ordinal integer, demand integer, cursor_before bigint, cursor_after bigint, ring_position bigint, scope_key text, disposition text, outcome_count integer, epoch_delta integer)
    LANGUAGE plpgsql
    SET search_path TO 'public'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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

        -- An empty class counts as served; each probe reads the oldest
        -- entry of the ready or expired index.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;

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

        loop
            exit when cardinality(v_take_ids) >= v_limit;
            -- Demand one reads the other class only when the preferred one
            -- has nothing, so it locks no row it will not take.
            if not v_have_ready and not v_ready_done
                    and (p_demand >= 2 or p_preference is distinct from 'expired' or v_expired_done) then
                fetch v_ready_rows into v_ready_id, v_ready_eligible, v_ready_poison, v_ready_marked;
                v_have_ready := found;
                v_ready_done := not found;
            end if;
            if not v_have_expired and not v_expired_done
                    and (p_demand >= 2 or p_preference is distinct from 'ready' or v_ready_done) then
                fetch v_expired_rows into v_expired_id, v_expired_eligible, v_expired_poison;
                v_have_expired := found;
                v_expired_done := not found;
            end if;

            if v_have_ready and v_have_expired then
                -- Demand >= 2 takes an unserved class head first; otherwise
                -- (demand one reads both only without a preference) the
                -- older eligible time wins.
                v_pick_ready := case
                    when p_demand >= 2 and v_served_ready <> v_served_expired then not v_served_ready
                    else (v_ready_eligible, v_ready_id) <= (v_expired_eligible, v_expired_id) end;
            elsif v_have_ready then
                v_pick_ready := true;
            elsif v_have_expired then
                v_pick_ready := false;
            elsif v_ready_done and v_expired_done then
                exit;
            else
                continue;
            end if;

            -- Last-slot rule: the final outcome is kept for a nonempty class
            -- that is still unserved; that class has no row left here.
            exit when p_demand >= 2 and v_remaining = 1
                and not (case when v_pick_ready then v_served_expired else v_served_ready end);

            if v_pick_ready then
                v_take_ids := v_take_ids || v_ready_id;
                v_take_kinds := v_take_kinds
                    || case when v_ready_marked then 'admitted_ready' else 'queued_ready' end;
                v_take_poison := v_take_poison || v_ready_poison;
                v_take_eligible := v_take_eligible || v_ready_eligible;
                v_served_ready := true;
                v_have_ready := false;
            else
                v_take_ids := v_take_ids || v_expired_id;
                v_take_kinds := v_take_kinds || 'expired'::text;
                v_take_poison := v_take_poison || v_expired_poison;
                v_take_eligible := v_take_eligible || v_expired_eligible;
                v_served_expired := true;
                v_have_expired := false;
            end if;
            v_remaining := v_remaining - 1;
        end loop;
        close v_ready_rows;
        close v_expired_rows;

        if cardinality(v_take_ids) > 0 then
            v_call_token := gen_random_uuid();
            v_xid := txid_current();
            return query
                -- statement write
                with chosen as (
                    select t.id, t.kind, t.poison, t.eligible, t.walk
                      from unnest(v_take_ids, v_take_kinds, v_take_poison, v_take_eligible)
                               with ordinality as t(id, kind, poison, eligible, walk)
                ), mutated as (
                    update docket_runs r
                       set claim_token = case when c.poison then null else gen_random_uuid() end,
                           claimed_at = case when c.poison then null else p_now end,
                           wake_at = null,
                           claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                           tenant_admitted_at = case when c.poison then null else r.tenant_admitted_at end,
                           poisoned_at = case when c.poison then p_now end,
                           poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                           updated_at = now()
                      from chosen c
                     where r.id = c.id
                    returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash, r.checkpoint_seq,
                              r.claim_token, r.claimed_at, r.claim_attempts, r.poisoned_at,
                              r.poison_reason, c.kind, c.eligible, c.walk
                )
                select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id, m.graph_hash,
                       m.checkpoint_seq, m.claim_token, m.claimed_at, m.claim_attempts,
                       m.poisoned_at, m.poison_reason, m.kind, m.eligible, v_call_token, v_xid,
                       0, (row_number() over (order by m.walk))::integer, p_demand,
                       null::bigint, null::bigint, null::bigint, null::text,
                       case when m.kind = 'expired' then 'expired_recovery' end,
                       null::integer, null::integer
                  from mutated m
                 order by m.walk;
                -- end statement
        end if;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;

-- Name: docket_rate_step(integer, interval); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_rate_step(p_limit integer, p_period interval) RETURNS interval
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
    select ((round(extract(epoch from p_period) * 1000000)::bigint + p_limit - 1) / p_limit)
           * interval '1 microsecond'
$$;

-- Name: docket_runs; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_runs (
    id bigint NOT NULL,
    run_id text NOT NULL,
    tenant_id text,
    scope_key text GENERATED ALWAYS AS (COALESCE(tenant_id, ''::text)) STORED,
    graph_id text NOT NULL,
    graph_hash text NOT NULL,
    status text NOT NULL,
    step integer DEFAULT 0 NOT NULL,
    state jsonb NOT NULL,
    checkpoint_seq bigint DEFAULT 0 NOT NULL,
    latest_checkpoint_type text,
    claim_token uuid,
    claimed_at timestamp with time zone,
    wake_at timestamp with time zone,
    claim_attempts integer DEFAULT 0 NOT NULL,
    claim_abandons integer DEFAULT 0 NOT NULL,
    poisoned_at timestamp with time zone,
    poison_reason text,
    inserted_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    tenant_admitted_at timestamp with time zone,
    attempt integer DEFAULT 0 NOT NULL,
    errors jsonb DEFAULT '[]'::jsonb NOT NULL,
    trace_context jsonb,
    last_commit_token uuid,
    unique_key text,
    unique_bucket timestamp with time zone,
    unique_statuses text[],
    max_attempts integer,
    CONSTRAINT docket_runs_admission_check CHECK (((tenant_admitted_at IS NULL) OR ((status = 'running'::text) AND (poisoned_at IS NULL)))),
    CONSTRAINT docket_runs_attempt_check CHECK ((attempt >= 0)),
    CONSTRAINT docket_runs_claim_pair_check CHECK (((claim_token IS NULL) = (claimed_at IS NULL))),
    CONSTRAINT docket_runs_counters_check CHECK (((step >= 0) AND (checkpoint_seq >= 0) AND (claim_attempts >= 0) AND (claim_abandons >= 0))),
    CONSTRAINT docket_runs_errors_array_check CHECK ((jsonb_typeof(errors) = 'array'::text)),
    CONSTRAINT docket_runs_errors_bound_check CHECK (
CASE
    WHEN (jsonb_typeof(errors) = 'array'::text) THEN (jsonb_array_length(errors) <= 20)
    ELSE true
END),
    CONSTRAINT docket_runs_errors_entry_check CHECK ((NOT jsonb_path_exists(errors, '$[*]?(((((@.type() != "object" || !(@."attempt".type() == "number")) || @."attempt" < 1) || !(@."at".type() == "string")) || !(@."error".type() == "string")) || !((((@."kind" == "error" || @."kind" == "panic") || @."kind" == "no_result") || @."kind" == "invalid_result") || @."kind" == "retry"))'::jsonpath))),
    CONSTRAINT docket_runs_finished_check CHECK (((status = ANY (ARRAY['done'::text, 'failed'::text, 'cancelled'::text])) = (finished_at IS NOT NULL))),
    CONSTRAINT docket_runs_graph_hash_check CHECK (((graph_hash ~ '[^ ]'::text) AND (octet_length(graph_hash) <= 200) AND (graph_hash !~ '[\u0001-\u001f\u007f-\u009f]'::text))),
    CONSTRAINT docket_runs_graph_id_check CHECK (((graph_id ~ '[^ ]'::text) AND (octet_length(graph_id) <= 200) AND (graph_id !~ '[\u0001-\u001f\u007f-\u009f]'::text))),
    CONSTRAINT docket_runs_healthy_check CHECK (((status <> 'running'::text) OR (poisoned_at IS NOT NULL) OR ((wake_at IS NULL) <> (claim_token IS NULL)))),
    CONSTRAINT docket_runs_max_attempts_check CHECK ((max_attempts >= 1)),
    CONSTRAINT docket_runs_parked_check CHECK (((status = 'running'::text) OR ((claim_token IS NULL) AND (wake_at IS NULL) AND (poisoned_at IS NULL)))),
    CONSTRAINT docket_runs_poison_pair_check CHECK (((poisoned_at IS NULL) = (poison_reason IS NULL))),
    CONSTRAINT docket_runs_poison_reason_check CHECK (((poison_reason IS NULL) OR (poison_reason = ANY (ARRAY['max_claim_attempts_exceeded'::text, 'max_claim_abandons_exceeded'::text])))),
    CONSTRAINT docket_runs_poisoned_check CHECK (((poisoned_at IS NULL) OR ((status = 'running'::text) AND (claim_token IS NULL) AND (wake_at IS NULL)))),
    CONSTRAINT docket_runs_run_id_check CHECK (((run_id ~ '[^ ]'::text) AND (octet_length(run_id) <= 200) AND (run_id !~ '[\u0001-\u001f\u007f-\u009f]'::text))),
    CONSTRAINT docket_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'waiting'::text, 'done'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT docket_runs_tenant_id_check CHECK (((tenant_id IS NULL) OR ((tenant_id ~ '[^ ]'::text) AND (octet_length(tenant_id) <= 200) AND (tenant_id !~ '[\u0001-\u001f\u007f-\u009f]'::text)))),
    CONSTRAINT docket_runs_trace_context_check CHECK (((trace_context IS NULL) OR (jsonb_typeof(trace_context) = 'object'::text))),
    CONSTRAINT docket_runs_unique_check CHECK ((((unique_key IS NULL) = (unique_statuses IS NULL)) AND ((unique_bucket IS NULL) OR (unique_key IS NOT NULL)) AND ((unique_statuses IS NULL) OR ((status = ANY (unique_statuses)) AND (unique_statuses <@ ARRAY['running'::text, 'waiting'::text, 'done'::text, 'failed'::text, 'cancelled'::text]) AND (array_position(unique_statuses, NULL::text) IS NULL))))),
    CONSTRAINT docket_runs_unique_key_check CHECK (((unique_key IS NULL) OR ((unique_key ~ '[^ ]'::text) AND (octet_length(unique_key) <= 200) AND (unique_key !~ '[\u0001-\u001f\u007f-\u009f]'::text))))
);

-- Name: docket_run_claimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_claimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
$$;

-- Name: docket_run_healthy(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_healthy(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null
$$;

-- Name: docket_run_marked_claimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_marked_claimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
       and r.tenant_admitted_at is not null
$$;

-- Name: docket_run_marked_unclaimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_marked_unclaimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
       and r.tenant_admitted_at is not null
$$;

-- Name: docket_run_phase(public.docket_runs, timestamp with time zone); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_phase(r public.docket_runs, observed_at timestamp with time zone) RETURNS text
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path TO 'public'
    AS $$
-- The one definition of a run's phase, read by every query that shows or
-- filters runs. The order of the branches is the precedence: a terminal
-- status first, then the external wait, the poison facts, a held claim,
-- and for an unclaimed running run whether its tenant or its domain is paused, when it
-- is due and whether its tenant admitted it. Beyond its arguments it reads
-- the run's partition and the policy row, both by primary key.
begin
return case
    when r.status in ('done', 'failed', 'cancelled') then r.status
    when r.status = 'waiting' then 'waiting'
    when r.poisoned_at is not null then 'poisoned'
    when r.claim_token is not null then 'executing'
    -- A paused tenant's unclaimed runs wait for its resume (only TenantFair
    -- honours a tenant's pause; under Legacy they are claimed as usual), and
    -- so do a paused domain's, under either engine.
    when exists (select from docket_claim_partitions p where p.scope_key = r.scope_key and p.paused)
         and exists (select from docket_claim_policy pol where pol.id = 1 and pol.admission_mode = 'tenant_fair')
         or exists (select from docket_claim_policy pol where pol.id = 1 and pol.paused)
        then 'paused'
    -- Not due, and the last write was a failed attempt: the verdict commit
    -- appends the error entry and sets updated_at in one statement, so the
    -- newest entry's time equals updated_at exactly when nothing wrote the
    -- run since. An operator's retry entry is not a failed attempt.
    when r.wake_at > observed_at
         and jsonb_array_length(r.errors) > 0
         and r.errors -> -1 ->> 'kind' <> 'retry'
         and (r.errors -> -1 ->> 'at')::timestamptz = r.updated_at then 'retrying'
    when r.wake_at > observed_at then 'scheduled'
    when r.tenant_admitted_at is not null then 'ready'
    else 'queued'
end;
end
$$;

-- Name: docket_run_unclaimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_unclaimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
$$;

-- Name: docket_run_unmarked_claimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_unmarked_claimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
       and r.tenant_admitted_at is null
$$;

-- Name: docket_run_unmarked_unclaimed(public.docket_runs); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_run_unmarked_unclaimed(r public.docket_runs) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
       and r.tenant_admitted_at is null
$$;

-- Name: docket_runs_guard_scope(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_guard_scope() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    if new.tenant_id is distinct from old.tenant_id then
        raise exception 'docket: the tenant of a run is immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    return new;
end;
$$;

-- Name: docket_runs_release_unique(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_release_unique() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    new.unique_key := null;
    new.unique_bucket := null;
    new.unique_statuses := null;
    return new;
end;
$$;

-- Name: docket_runs_require_tenant(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_require_tenant() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    if exists (select 1 from docket_created_runs r where r.tenant_id is null)
       and (select p.tenant_required from docket_claim_policy p where p.id = 1) then
        raise exception 'docket: tenant required: the domain requires a tenant and a run has none'
            using errcode = 'check_violation', constraint = 'docket_runs_tenant_required_check';
    end if;
    return null;
end;
$$;

-- Name: docket_runs_track_delete(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_track_delete() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    -- Counters are locked in scope order first, as in
    -- docket_runs_track_insert, so concurrent writers cannot deadlock.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select r.scope_key from docket_deleted_runs r
                             where r.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count - d.removed,
           updated_at = now()
      from (select r.scope_key, count(*) as removed
              from docket_deleted_runs r
             where r.status in ('running', 'waiting')
             group by r.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;

-- Name: docket_runs_track_insert(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_track_insert() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
declare
    v_park boolean;
begin
    insert into docket_claim_partitions (scope_key)
    select distinct c.scope_key from docket_created_runs c order by c.scope_key
    on conflict (scope_key) do nothing;

    -- Lock the counters in scope order first, the order in which the
    -- worker's batch commit takes them, so that two writers touching the
    -- same scopes wait for each other instead of deadlocking; the update
    -- below would take them in whatever order its join produces.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select c.scope_key from docket_created_runs c
                             where c.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    -- Read after the counter locks, in a snapshot of its own: a concurrent
    -- switch of parking or of the engine that committed before this point
    -- is seen here (docs/fairness-parked.md, the races each rule closes).
    v_park := exists (select from docket_claim_policy p
                       where p.id = 1 and p.admission_mode = 'tenant_fair' and p.park_dormant);

    -- least ignores nulls: a scope whose new runs are all waiting or
    -- poisoned keeps its parked_until. The counter read here is the one this
    -- transaction locked, so "was zero" cannot be overtaken by a concurrent
    -- insert, status change or delete of the same scope: each of those
    -- writes this row and waits for the lock. A paused partition is left
    -- awake, as the walk leaves it, so every visit refuses it.
    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           parked_until = case
               when d.awake then null
               when v_park and s.unfinished_count = 0
                    and not exists (select from docket_claim_partitions pa
                                     where pa.scope_key = s.scope_key and pa.paused)
                   then coalesce(d.next_wake, 'infinity')
               when s.parked_until is null then null
               else least(s.parked_until, d.next_wake) end,
           updated_at = now()
      from (select c.scope_key, count(*) as created,
                   coalesce(bool_or(docket_run_healthy(c)
                                    and (c.claim_token is not null or c.wake_at <= now())), false) as awake,
                   min(c.wake_at) filter (where docket_run_unclaimed(c)) as next_wake
              from docket_created_runs c
             where c.status in ('running', 'waiting')
             group by c.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;

-- Name: docket_runs_track_status(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_track_status() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    update docket_claim_schedule
       set unfinished_count = unfinished_count
               + case when new.status in ('running', 'waiting') then 1 else -1 end,
           updated_at = now()
     where scope_key = new.scope_key;
    return null;
end;
$$;

-- Name: docket_runs_wake_partition(); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_runs_wake_partition() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
begin
    update docket_claim_schedule s
       set parked_until = case
               when s.parked_until is null or new.wake_at <= now() then null
               else least(s.parked_until, new.wake_at) end
     where s.scope_key = new.scope_key;
    return null;
end;
$$;

-- Name: docket_tenant_fair_claim(timestamp with time zone, timestamp with time zone, integer, integer, text, boolean); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_tenant_fair_claim(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean) RETURNS TABLE(row_kind text, error_reason text, run_id text, tenant_id text, graph_id text, graph_hash text, checkpoint_seq bigint, claim_token uuid, claimed_at timestamp with time zone, claim_attempt integer, poisoned_at timestamp with time zone, poison_reason text, work_class text, eligible_at timestamp with time zone, call_token uuid, transaction_id bigint, visit_ordinal integer, outcome_ordinal integer, demand integer, cursor_before bigint, cursor_after bigint, ring_position bigint, scope_key text, disposition text, outcome_count integer, epoch_delta integer)
    LANGUAGE plpgsql
    SET search_path TO 'public'
    SET plan_cache_mode TO 'force_generic_plan'
    AS $$
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

        -- Wake by time, before the walk so that this call already visits the
        -- partitions whose time has come. A row some writer holds is skipped
        -- rather than waited for (claim never waits on a schedule row) and
        -- stays due, so a later call unparks it, unless that writer wakes it
        -- itself (wake by write). Only claim calls park and
        -- sweep, and they serialize on the policy row, so no park can
        -- interleave with this statement.
        if v_park then
            -- statement wake_sweep
            with due as (
                select s.scope_key
                  from docket_claim_schedule s
                 where s.parked_until <= p_now
                 order by s.parked_until
                 limit c_wake_batch
                   for no key update skip locked
            )
            update docket_claim_schedule s
               set parked_until = null
             where s.scope_key = any (array(select d.scope_key from due d));
            -- end statement
            get diagnostics v_woken = row_count;
        end if;

        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        -- Work of a paused partition is no work here: no visit could serve
        -- it, so reserving a slot for it would only withhold one from the
        -- others. Entries of paused partitions at the head of the index are
        -- stepped over, each checked in docket_claim_partitions_paused_idx.
        -- The expired class is probed in two steps. The first reads the
        -- domain's oldest claim of all, in docket_runs_expired_idx, the one
        -- index whose predicate is the claimed state and whose order is the
        -- statement's, so it reads one entry whatever the statistics say
        -- (as Legacy's probe does): while no claim has
        -- expired, the common case, the class is empty and nothing else is
        -- read. Only when some claim has expired does the second step look
        -- for one that is admitted and outside a paused partition. A single
        -- statement asking that at once could also be served by the
        -- admitted indexes, and with statistics taken before the domain's
        -- claims piled up a generic plan chose one of them and filtered
        -- every live claim on each call.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                       and not exists (select from docket_claim_partitions pa
                                        where pa.scope_key = r.scope_key and pa.paused)
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
            if not v_served_expired then
                -- statement expired_probe
                select (select r.id from docket_runs r
                         where docket_run_marked_claimed(r)
                           and r.claimed_at < p_cutoff
                           and not exists (select from docket_claim_partitions pa
                                            where pa.scope_key = r.scope_key and pa.paused)
                         order by r.claimed_at, r.id
                         limit 1) is null
                  into v_served_expired;
                -- end statement
            end if;
        end if;

        -- Only trace rows identify the call; production rows leave it null.
        if p_trace then
            v_call_token := gen_random_uuid();
        end if;

        loop
            v_position := null;
            v_win_index := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row. Parked mode walks the awake ring
                -- through its own index, one keyset step past the
                -- call-local cursor at a time, wrapping to the smallest
                -- position.
                if v_park then
                    -- statement ring_step_awake
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.parked_until is null
                       and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap_awake
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring and s.parked_until is null
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                elsif v_stepping then
                    -- The full-ring walk's step: the same keyset step
                    -- through the whole ring.
                    -- statement ring_step
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                else
                    if v_win_next > cardinality(v_win_positions) then
                        -- The next window: the distinct ring positions that
                        -- the next steps reach, strictly after the cursor
                        -- and then wrapping once to the smallest position,
                        -- never more than the inspections left. Each comes
                        -- with the probe the partition lock statement makes
                        -- (one per page), taken in this statement's
                        -- snapshot; a wrap past the window reads a new one,
                        -- which may revisit positions.
                        v_window := least(c_inspections - v_visit,
                                          case when cardinality(v_win_positions) = 0
                                               then least(c_first_window, v_remaining)
                                               else c_inspections end);
                        -- statement ring_window
                        select coalesce(array_agg(w.pos order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.scope order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.has_page order by w.lap, w.pos), '{}')
                          into v_win_positions, v_win_scopes, v_win_pages
                          from (select n.pos, n.scope, n.lap,
                                       coalesce(ar.found or qr.found or ex.found, false) as has_page
                                  from ((select s.ring_position as pos, s.scope_key as scope, 0 as lap
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position > v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        union all
                                        (select s.ring_position, s.scope_key, 1
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position <= v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        order by lap, pos
                                        limit v_window) as n
                                  -- One probe per page and position, each a
                                  -- lateral join and not an EXISTS in the
                                  -- select list: PostgreSQL 13 plans such an
                                  -- EXISTS with a hashed alternative that
                                  -- reads every due run of the domain.
                                  -- docket_runs_admitted_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as ar on true
                                  -- docket_runs_queued_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as qr on true
                                  -- docket_runs_admitted_claimed_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                                                      order by r.claimed_at, r.id
                                                      limit 1) as ex on true) as w;
                        -- end statement
                        v_win_next := 1;
                        v_run_end := 0;
                    end if;
                    if v_win_next <= cardinality(v_win_positions) then
                        v_win_index := v_win_next;
                        v_win_next := v_win_next + 1;
                        v_position := v_win_positions[v_win_index];
                        v_scope := v_win_scopes[v_win_index];
                    end if;
                end if;
            end if;

            -- The chosen outcomes are written when the call ends, and before
            -- a wrap revisits a partition that still has unwritten ones.
            if v_position is null or v_scope = any (v_pending_grants) then
                if cardinality(v_pending) = 0 and v_position is null and v_visit > 0 then
                    -- A call without outcomes only moves the cursor; the
                    -- write below would open every index of docket_runs
                    -- for nothing.
                    -- statement cursor_move
                    update docket_claim_policy p
                       set scan_ring_position = v_cursor
                     where p.id = 1;
                    -- end statement
                elsif cardinality(v_pending) > 0 then
                    -- One set-based mutation of the chosen rows, the epoch
                    -- of each grant and, at the end, the cursor. Every row
                    -- is locked by this call and was rechecked, so each is
                    -- written. A batch holds at most one grant per
                    -- partition, because a revisit writes the batch first.
                    -- The rows carry their visit and call-wide outcome
                    -- ordinals; callers order by those, not by arrival.
                    return query
                        -- statement write
                        with chosen as (
                            select t.id, t.kind, t.poison, t.eligible, t.visit, t.cursor_before,
                                   t.ring_position, t.scope_key, t.ordinal
                              from unnest(v_pending) with ordinality
                                       as t(id, kind, poison, eligible, visit, cursor_before,
                                            ring_position, scope_key, ordinal)
                        ), mutated as (
                            update docket_runs r
                               set claim_token = case when c.poison then null else gen_random_uuid() end,
                                   claimed_at = case when c.poison then null else p_now end,
                                   wake_at = null,
                                   claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                                   tenant_admitted_at = case
                                       when c.poison then null
                                       when c.kind = 'queued_ready' then p_now
                                       else r.tenant_admitted_at end,
                                   poisoned_at = case when c.poison then p_now end,
                                   poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                                   updated_at = now()
                              from chosen c
                             where r.id = c.id
                            returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash,
                                      r.checkpoint_seq, r.claim_token, r.claimed_at,
                                      r.claim_attempts, r.poisoned_at, r.poison_reason,
                                      c.kind, c.eligible, c.visit, c.cursor_before, c.ring_position,
                                      c.scope_key as visit_scope, c.ordinal
                        ), granted as (
                            -- Outcome-backed service evidence: once per grant.
                            update docket_claim_partitions pa
                               set admission_epoch = pa.admission_epoch + 1,
                                   rate_tat = v_pending_tats[array_position(v_pending_grants, pa.scope_key)]
                             where pa.scope_key = any (v_pending_grants)
                        ), moved as (
                            update docket_claim_policy p
                               set scan_ring_position = v_cursor
                             where p.id = 1 and v_position is null
                        )
                        select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id,
                               m.graph_hash, m.checkpoint_seq, m.claim_token, m.claimed_at,
                               m.claim_attempts, m.poisoned_at, m.poison_reason, m.kind,
                               m.eligible, v_call_token, v_xid, m.visit,
                               (v_written + m.ordinal)::integer, p_demand,
                               m.cursor_before, m.ring_position, m.ring_position, m.visit_scope,
                               case m.kind
                                   when 'admitted_ready' then 'admitted_reacquisition'
                                   when 'queued_ready' then 'queued_promotion'
                                   else 'expired_recovery' end,
                               null::integer, null::integer
                          from mutated m;
                        -- end statement
                    v_written := v_written + cardinality(v_pending);
                    v_pending := '{}';
                    v_pending_grants := '{}';
                    v_pending_tats := '{}';
                end if;
                exit when v_position is null;
            end if;

            v_visit := v_visit + 1;
            if v_xid is null then
                v_xid := txid_current();
            end if;
            v_cursor_before := v_cursor;
            v_cursor := v_position;
            v_visit_outcomes := 0;
            v_parked := false;
            v_parked_until := null;

            if v_win_index is not null and not v_win_pages[v_win_index] then
                -- A run of consecutive window positions whose probe found
                -- no page is locked when the walk reaches its first one,
                -- with the partition lock of each, without waiting; the
                -- window's probe stands for each lock statement's probe.
                -- The run ends before the next position with a page, so
                -- no visit in between can end the call: every partition
                -- locked here is one the walk inspects.
                if v_win_index > v_run_end then
                    v_run_end := v_win_index;
                    while v_run_end < cardinality(v_win_pages) and not v_win_pages[v_run_end + 1] loop
                        v_run_end := v_run_end + 1;
                    end loop;
                    v_run_scopes := v_win_scopes[v_win_index:v_run_end];
                    -- The lock returns each partition's newest committed
                    -- version, so a pause committed after the window's
                    -- snapshot is seen here.
                    -- statement empty_run_lock
                    select coalesce(array_agg(l.scope_key), '{}'),
                           coalesce(array_agg(l.scope_key) filter (where l.paused), '{}')
                      into v_run_locked, v_run_paused
                      from (select pa.scope_key, pa.paused
                              from docket_claim_partitions pa
                             where pa.scope_key = any (v_run_scopes)
                               for no key update skip locked) as l;
                    -- end statement
                    if not p_trace and v_run_end > v_win_index then
                        -- Without trace rows the rest of the run needs no
                        -- step of its own: each of its positions is one
                        -- inspection without an outcome, so the walk counts
                        -- them and moves the cursor to the run's last one.
                        -- No position of the run can hold unwritten
                        -- outcomes of this call: those rows are still due
                        -- in every snapshot until written, so the window's
                        -- probe would have found its page.
                        v_visit := v_visit + (v_run_end - v_win_index);
                        v_cursor := v_win_positions[v_run_end];
                        v_win_next := v_run_end + 1;
                    end if;
                end if;
                v_disposition := case when v_scope = any (v_run_paused) then 'paused'
                                      when v_scope = any (v_run_locked) then 'empty_page'
                                      else 'partition_lock_skip' end;
            else
                -- The lock statement also probes the three pages, so a visit
                -- with nothing due and nothing expired ends as empty_page
                -- without the candidate statement. Its snapshot predates the
                -- lock, which for an empty page only means the visit saw the
                -- scope a moment earlier; a page found here is read again, in
                -- a snapshot taken after the lock, by the candidate statement.
                -- A paused partition's pages are not probed: the case
                -- evaluates its branch only for an unpaused one. A position
                -- the ring window's probe found a page at is not probed
                -- again: the candidate statement reads its pages anyway, and
                -- a page gone since ends the visit there as empty_page, the
                -- disposition this probe would have given (the full-ring walk
                -- never parks, so the probe decides nothing else).
                -- statement partition_lock
                select pa.max_active, pa.paused, pa.rate_limit, pa.rate_period, pa.rate_burst,
                       pa.rate_unlimited, pa.rate_tat,
                       case when pa.paused then false when v_win_index is not null then true else
                       (select true from docket_runs r
                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                         order by r.wake_at, r.id
                         limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                            order by r.wake_at, r.id
                            limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                            order by r.claimed_at, r.id
                            limit 1) is not null
                       end
                  into v_override, v_paused, v_part_rate_limit, v_part_rate_period, v_part_rate_burst,
                       v_part_rate_unlimited, v_rate_tat, v_has_page
                  from docket_claim_partitions pa
                 where pa.scope_key = v_scope
                   for no key update skip locked;
                -- end statement

                if not found then
                    v_disposition := 'partition_lock_skip';
                elsif v_paused then
                    v_disposition := 'paused';
                elsif not v_has_page then
                    v_disposition := 'empty_page';
                    if v_park then
                        -- Park: first the schedule row, without waiting. A
                        -- writer that holds it has not committed, and its own
                        -- write will set the row right, so the partition stays
                        -- awake. Once the lock is held, a writer that could make
                        -- a row of the scope eligible either committed before it
                        -- (the next statement's snapshot, taken after the lock,
                        -- sees its row) or waits for this call and writes the
                        -- schedule row after the park. The dormancy probe of
                        -- the lock statement above is older than the lock, so
                        -- the park re-checks dormancy in its own snapshot.
                        -- statement park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- Dormant: no claimed running row (an expired steal
                            -- depends on the caller's cutoff, a live claim will
                            -- be released) and no healthy unclaimed running row
                            -- due at p_now. Parked until the earliest wake_at of
                            -- the scope's healthy unclaimed running rows, else
                            -- for good (a write wakes it).
                            -- A partition whose last unfinished run finished
                            -- after the probe has left the ring: it is not
                            -- walked, and its next run makes it a member again,
                            -- so it is not parked.
                            -- statement park
                            update docket_claim_schedule s
                               set parked_until = coalesce(least(
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1),
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1)), 'infinity')
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                else
                    v_cap := coalesce(v_override, v_default_cap);
                    v_limit := least(c_grant_outcomes, v_remaining);
                    v_admitted := null;
                    v_frozen := 0;
                    v_no_slot := false;
                    v_lead_locked := false;
                    v_withheld := false;
                    v_walk_served_ready := v_served_ready;
                    v_walk_served_expired := v_served_expired;
                    v_walk_remaining := v_remaining;
                    v_queue_no := 0;
                    v_next_queue := 1;
                    v_take := '{}';
                    v_promote_ids := '{}';
                    v_moved_ids := '{}';
                    v_refused_ids := '{}';
                    -- The partition's own rate, else none when it is exempt,
                    -- else the domain's default.
                    if v_part_rate_limit is not null then
                        v_rate_step := docket_rate_step(v_part_rate_limit, v_part_rate_period);
                        v_rate_tolerance := v_rate_step * v_part_rate_burst;
                    elsif v_part_rate_unlimited then
                        v_rate_step := null;
                        v_rate_tolerance := null;
                    else
                        v_rate_step := v_default_rate_step;
                        v_rate_tolerance := v_default_rate_tolerance;
                    end if;
                    v_rate_promoted := 0;
                    v_rate_denied := false;

                    -- One statement after the partition lock, so its snapshot
                    -- (admitted count and pages) sees every grant committed
                    -- before the lock. The pages are MVCC reads: admitted-ready
                    -- and expired rows up to K each, and the queued FIFO up to
                    -- this grant's limit, since promotion is contiguous from the
                    -- head and could never reach further. They are ranked, at
                    -- most K ids are frozen, and exactly those are locked without
                    -- waiting, in rank order. A lock returns the newest committed
                    -- version of its row, which the walk rechecks.
                    --
                    -- Freezing: the first K / 4 rows of each class whose head
                    -- matters (with demand >= 2 a class not yet served in this
                    -- call, with demand 1 both) first; admitted before queued;
                    -- with demand 1 the preferred class; then the FIFO order for
                    -- queued rows, and poison first, eligible time and id for the
                    -- others. A class's rows are its admitted-ready rows then its
                    -- queued FIFO (ready), resp. its expired rows, each by
                    -- eligible time and id. Queued rows rank among themselves in
                    -- FIFO order, so the frozen ones are a prefix of the FIFO.
                    --
                    -- The walk meets the rows after locking: admitted before
                    -- queued; then each class head whose place matters, chosen
                    -- among the rows this visit locked and found fresh (the
                    -- oldest admitted one of its class); with demand 1 the
                    -- preferred class; poison first, eligible time and id. The
                    -- queued rows come last in FIFO order and are numbered 1, 2,
                    -- ...; a queued row held elsewhere or stale still takes its
                    -- number, so it blocks every promotion behind it.
                    --
                    -- The admitted count only matters when a queued row could
                    -- meet the cap. Admitted and queued rows are both unfinished,
                    -- so while the scope has no more unfinished runs than its
                    -- cap no promotion of this visit can reach it, and the count
                    -- is skipped. Counting stops at cap + Q, beyond which at most
                    -- Q admitted poisons could never bring it under the cap.
                    for v_candidate in
                        -- statement candidates
                        with pages as (
                            -- Admitted-ready: docket_runs_admitted_ready_idx.
                            (select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit c_frozen)
                            union all
                            -- Queued-ready, the FIFO: docket_runs_queued_ready_idx.
                            (select r.id, 'queued_ready', 'ready',
                                    r.wake_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit v_limit)
                            union all
                            -- Expired admitted claims: docket_runs_admitted_claimed_idx.
                            (select r.id, 'expired', 'expired',
                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                              order by r.claimed_at, r.id
                              limit c_frozen)
                        ), ranked as (
                            select p.id, p.kind, p.class, p.eligible,
                                   case when row_number() over (partition by p.class
                                                 order by p.kind = 'queued_ready', p.eligible, p.id) <= c_class_reserve
                                             and (p_demand = 1 or not (case p.class
                                                 when 'ready' then v_served_ready
                                                 else v_served_expired end))
                                        then 0 else 1 end as reserved,
                                   case when p_demand = 1 and p.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when p.kind <> 'queued_ready' and p.poison then 0 else 1 end
                                       as poison_first
                              from pages p
                        ), frozen as (
                            select h.id, h.kind, h.class, h.eligible, h.preference_last, h.poison_first
                              from ranked h
                             order by h.reserved, h.kind = 'queued_ready', h.preference_last,
                                      h.poison_first, h.eligible, h.id
                             limit c_frozen
                        ), locked as (
                            -- Each frozen id by its primary key (docket_runs_pkey), in
                            -- rank order, without waiting; the locked version is the
                            -- newest committed one, rechecked against its kind.
                            select f.id, f.kind, f.class, f.eligible, f.preference_last, f.poison_first,
                                   l.id is not null as is_locked,
                                   coalesce(l.scope_key = v_scope
                                       and case f.kind
                                           when 'expired' then l.marked_claimed and l.claimed_at < p_cutoff
                                           when 'admitted_ready' then l.marked_unclaimed and l.wake_at <= p_now
                                           else l.unmarked_unclaimed and l.wake_at <= p_now
                                           end, false) as is_fresh,
                                   coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                                   case when f.kind = 'expired' then l.claimed_at else l.wake_at end
                                       as locked_eligible,
                                   f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                              from frozen f
                              left join lateral (
                                    select r.id, r.scope_key, r.claimed_at, r.wake_at, r.claim_attempts,
                                           docket_run_marked_claimed(r) as marked_claimed,
                                           docket_run_marked_unclaimed(r) as marked_unclaimed,
                                           docket_run_unmarked_unclaimed(r) as unmarked_unclaimed
                                      from docket_runs r
                                     where r.id = f.id
                                       for update skip locked) as l on true
                        ), judged as (
                            select k.id, k.kind, k.is_locked, k.is_fresh, k.is_poison, k.locked_eligible,
                                   k.is_moved, k.preference_last, k.poison_first, k.eligible,
                                   -- The scope's count (docket_claim_schedule_pkey), and its
                                   -- admitted rows only when it has more unfinished runs
                                   -- than its cap: the unclaimed ones on the admitted-ready
                                   -- page's index and the claimed ones on the expired page's,
                                   -- each read up to the bound, so the sum read up to it is
                                   -- exact.
                                   case when (select s.unfinished_count
                                                from docket_claim_schedule s
                                               where s.scope_key = v_scope) > v_cap
                                        then least((select count(*)
                                                      from (select
                                                              from docket_runs r
                                                             where r.scope_key = v_scope
                                                               and docket_run_marked_unclaimed(r)
                                                             limit v_cap::bigint + c_grant_outcomes) as a)
                                                   + (select count(*)
                                                        from (select
                                                                from docket_runs r
                                                               where r.scope_key = v_scope
                                                                 and docket_run_marked_claimed(r)
                                                               limit v_cap::bigint + c_grant_outcomes) as c),
                                                   v_cap::bigint + c_grant_outcomes)
                                        else 0 end as admitted,
                                   -- The class heads are chosen among the rows this visit
                                   -- locked and rechecked: the oldest fresh admitted row of
                                   -- each class, so a head held elsewhere hands its place to
                                   -- the next row of its class.
                                   coalesce(case when k.kind <> 'queued_ready' and k.is_fresh
                                                      and (p_demand = 1 or not (case k.class
                                                          when 'ready' then v_served_ready
                                                          else v_served_expired end))
                                                 then row_number() over (
                                                          partition by k.class, k.kind <> 'queued_ready' and k.is_fresh
                                                          order by k.eligible, k.id) = 1
                                                 end, false) as is_head
                              from locked k
                        )
                        select j.id, j.kind, j.admitted, j.is_locked, j.is_fresh, j.is_poison,
                               j.locked_eligible as eligible, j.is_moved
                          from judged j
                         order by j.kind = 'queued_ready', j.is_head desc, j.preference_last,
                                  j.poison_first, j.eligible, j.id
                        -- end statement
                    loop
                        v_frozen := v_frozen + 1;
                        if v_admitted is null then
                            v_admitted := v_candidate.admitted;
                            v_no_slot := v_admitted >= v_cap;
                        end if;
                        if v_candidate.kind = 'queued_ready' then
                            v_queue_no := v_queue_no + 1;
                        end if;
                        -- The lead rows are those an outcome could come from:
                        -- every admitted row and the queued FIFO head.
                        v_lead := v_candidate.kind <> 'queued_ready' or v_queue_no = 1;
                        continue when not v_candidate.is_locked;
                        if v_lead then
                            v_lead_locked := true;
                        end if;
                        continue when cardinality(v_take) >= v_limit;

                        v_class := case when v_candidate.kind = 'expired' then 'expired' else 'ready' end;
                        -- Last-slot rule: the final outcome of the call is kept
                        -- for a nonempty class that is still unserved.
                        if v_walk_remaining = 1 and p_demand >= 2
                                and not (case v_class when 'ready' then v_walk_served_expired
                                         else v_walk_served_ready end) then
                            if v_lead and v_candidate.is_fresh then
                                v_withheld := true;
                            end if;
                            continue;
                        end if;

                        if v_candidate.kind = 'queued_ready' then
                            -- Promotion is contiguous from the FIFO head: a head
                            -- that is missing, stale or without a slot blocks
                            -- everything behind it in this visit.
                            continue when v_queue_no <> v_next_queue;
                            continue when not v_candidate.is_fresh;
                            continue when v_admitted >= v_cap;
                            -- Rate: the head in turn needs a token as it needs
                            -- a slot, a queued poison too, though like the slot
                            -- it takes none. The rate time before this
                            -- promotion is the stored one, moved one step past
                            -- greatest(stored, now) by each promotion so far.
                            if v_rate_step is not null
                                    and p_now < (case when v_rate_promoted = 0 then v_rate_tat
                                                      else greatest(v_rate_tat, p_now) + v_rate_step * v_rate_promoted
                                                 end) - v_rate_tolerance then
                                v_rate_denied := true;
                                continue;
                            end if;
                            v_next_queue := v_next_queue + 1;
                            v_promote_ids := v_promote_ids || v_candidate.id;
                            if v_candidate.is_moved then
                                v_moved_ids := v_moved_ids || v_candidate.id;
                            end if;
                            if not v_candidate.is_poison then
                                v_admitted := v_admitted + 1;
                                v_rate_promoted := v_rate_promoted + 1;
                            end if;
                        else
                            continue when not v_candidate.is_fresh;
                            if v_candidate.is_poison then
                                -- An admitted poison releases its marker.
                                v_admitted := v_admitted - 1;
                            end if;
                        end if;

                        v_take := v_take || row(v_candidate.id, v_candidate.kind, v_candidate.is_poison,
                                                v_candidate.eligible, v_visit, v_cursor_before, v_position,
                                                v_scope)::docket_claim_pending;
                        v_walk_remaining := v_walk_remaining - 1;
                        if v_class = 'ready' then
                            v_walk_served_ready := true;
                        else
                            v_walk_served_expired := true;
                        end if;
                    end loop;

                    -- A promoted row is the FIFO head of the page's snapshot by
                    -- contiguity, unless its locked version is due at another
                    -- time than the page read. Such a row is re-checked in a
                    -- fresh snapshot against every older queued row of the
                    -- scope, and refused as stale if one is not promoted by this
                    -- grant.
                    if cardinality(v_moved_ids) > 0 then
                        -- statement fifo_recheck
                        select coalesce(array_agg(r.id), '{}')
                          into v_refused_ids
                          from docket_runs r
                         where r.id = any (v_moved_ids)
                           and exists (
                               select 1
                                 from docket_runs o
                                where o.scope_key = r.scope_key and docket_run_unmarked_unclaimed(o) and o.wake_at <= p_now
                                  and (o.wake_at, o.id) < (r.wake_at, r.id)
                                  and not (o.id = any (v_promote_ids)));
                        -- end statement
                        if cardinality(v_refused_ids) > 0 then
                            v_kept := '{}';
                            foreach v_item in array v_take loop
                                continue when v_item.id = any (v_refused_ids);
                                v_kept := v_kept || v_item;
                            end loop;
                            v_take := v_kept;
                        end if;
                    end if;

                    v_visit_outcomes := cardinality(v_take);
                    if v_visit_outcomes > 0 then
                        v_pending := v_pending || v_take;
                        v_pending_grants := v_pending_grants || v_scope;
                        v_rate_promoted := 0;
                        foreach v_item in array v_take loop
                            if v_item.kind = 'expired' then
                                v_served_expired := true;
                            else
                                v_served_ready := true;
                            end if;
                            if v_item.kind = 'queued_ready' and not v_item.poison then
                                v_rate_promoted := v_rate_promoted + 1;
                            end if;
                        end loop;
                        -- The partition's rate time after the grant: each
                        -- promotion that stayed after the FIFO re-check takes
                        -- one step; the write statement stores it.
                        v_pending_tats := array_append(v_pending_tats,
                            case when v_rate_step is not null and v_rate_promoted > 0
                                 then greatest(v_rate_tat, p_now) + v_rate_step * v_rate_promoted
                                 else v_rate_tat end);
                    end if;
                    v_remaining := v_remaining - v_visit_outcomes;
                    -- Without an outcome the first cause that applies names the
                    -- visit (docs/operations.md, visit dispositions): no slot
                    -- for its frozen queued rows, a fresh lead row the last-slot
                    -- rule withheld, lead rows locked here but stale (rows the
                    -- FIFO re-check refused count so), else every lead row held
                    -- elsewhere. Each holds whatever the freezing width was.
                    v_disposition := case
                        when v_visit_outcomes > 0 then 'grant'
                        when v_frozen = 0 then 'empty_page'
                        when v_queue_no > 0 and v_no_slot then 'cap_debt_denial'
                        when v_rate_denied then 'rate_limited'
                        when v_withheld then 'denied'
                        when v_lead_locked then 'stale'
                        else 'lock_miss' end;
                    if v_disposition = 'rate_limited' and v_park then
                        -- Parked mode parks a partition whose queued head has
                        -- no token until its next token, when it is otherwise
                        -- dormant: no admitted-ready row due, no claim at all.
                        -- The next token comes at the rate time (no promotion
                        -- of this visit moved it) less the tolerance; an
                        -- admitted-ready row due earlier wakes it then. The
                        -- lock and the re-check in the park's own snapshot are
                        -- the dormant park's.
                        v_token_at := v_rate_tat - v_rate_tolerance;
                        -- statement rate_park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- statement rate_park
                            update docket_claim_schedule s
                               set parked_until = least(v_token_at,
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1))
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                end if;
            end if;

            if v_visit_outcomes = 0 then
                v_stepping := false;
            end if;

            if p_trace then
                row_kind := 'inspection';
                error_reason := null;
                run_id := null;
                tenant_id := null;
                graph_id := null;
                graph_hash := null;
                checkpoint_seq := null;
                claim_token := null;
                claimed_at := null;
                claim_attempt := case when v_park then v_woken end;
                poisoned_at := null;
                poison_reason := null;
                work_class := null;
                eligible_at := case when v_parked and v_parked_until <> 'infinity' then v_parked_until end;
                call_token := v_call_token;
                transaction_id := v_xid;
                visit_ordinal := v_visit;
                outcome_ordinal := case when v_parked then 0 end;
                demand := p_demand;
                cursor_before := v_cursor_before;
                cursor_after := v_cursor;
                ring_position := v_position;
                scope_key := v_scope;
                disposition := v_disposition;
                outcome_count := v_visit_outcomes;
                epoch_delta := case when v_visit_outcomes > 0 then 1 else 0 end;
                return next;
            end if;
        end loop;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;

-- Name: docket_tenant_fair_claim_combined(timestamp with time zone, timestamp with time zone, integer, integer, text); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_tenant_fair_claim_combined(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text) RETURNS TABLE(row_kind text, error_reason text, run_id text, tenant_id text, graph_id text, graph_hash text, checkpoint_seq bigint, claim_token uuid, claimed_at timestamp with time zone, claim_attempt integer, poisoned_at timestamp with time zone, poison_reason text, work_class text, eligible_at timestamp with time zone, outcome_ordinal bigint)
    LANGUAGE plpgsql
    SET search_path TO 'public'
    AS $$
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

        <<wait>>
        loop
            if not v_combiner then
                -- statement combiner_lock
                v_combiner := pg_try_advisory_xact_lock(v_key);
                -- end statement
            end if;
            -- A combiner that never waited has no ticket, so nothing can
            -- have been delivered to it.
            exit wait when v_combiner and v_ticket is null;
            if not v_combiner then
                if v_ticket is null then
                    v_ticket := nextval('docket_claim_tickets');
                end if;
                -- Announce the demand and wait for the combiner's commit, then
                -- give both locks back by rolling back the block's
                -- subtransaction.
                begin
                    if clock_timestamp() >= v_deadline then
                        raise lock_not_available;
                    end if;
                    if p_demand < c_marker_demand then
                        -- statement marker
                        perform pg_advisory_xact_lock_shared(v_kind, v_ticket * c_marker_demand + p_demand);
                        -- end statement
                    end if;
                    -- statement combiner_wait
                    perform pg_advisory_xact_lock_shared(v_key);
                    -- end statement
                    raise sqlstate 'DKW01';
                exception
                    when sqlstate 'DKW01' then
                        null;
                    when lock_not_available then
                        v_timed_out := true;
                end;
                if v_timed_out then
                    -- The marker is gone. Take the ticket's served lock, which a
                    -- combiner serving this ticket holds to its commit, before
                    -- the collect below, so that the collect finds what such a
                    -- combiner delivered. The lock is not bounded by the lock
                    -- wait: it waits for one combiner that is already walking.
                    loop
                        begin
                            -- statement served_lock
                            perform pg_advisory_xact_lock(v_served, v_ticket);
                            -- end statement
                            exit;
                        exception when lock_not_available then
                            null;
                        end;
                    end loop;
                end if;
            end if;
            -- A waiter collects what a combiner delivered to its ticket; so
            -- does a caller that became the combiner after waiting, since a
            -- combiner before it may have served the ticket.
            -- statement delivery_collect
            delete from docket_claim_deliveries d
             where d.ticket = v_ticket
            returning d.outcomes into v_own;
            -- end statement
            if found then
                perform set_config('synchronous_commit', 'off', true);
                return query
                    select (v_own[g.i]).*, g.i::bigint
                      from generate_subscripts(v_own, 1) as g(i)
                     order by g.i;
                exit call;
            end if;
            exit wait when v_combiner;
            if v_timed_out then
                -- Nothing was delivered: withdraw the ticket.
                -- statement tombstone_write
                insert into docket_claim_deliveries (ticket, outcomes)
                values (v_ticket, '{}');
                -- end statement
                row_kind := 'error';
                error_reason := 'lock_contention';
                return next;
                exit call;
            end if;
            -- Not served. A combiner that holds the lock now, or a caller
            -- queued for it, reads the markers after this one was taken, so
            -- the caller waits for that one's commit in shared mode, with the
            -- other waiters it serves; they would otherwise take the lock one
            -- after another, each only to collect its delivery. The probe is
            -- a shared try in a subtransaction: it fails only while the lock
            -- is held or awaited in exclusive mode, not while other waiters
            -- briefly hold it shared.
            begin
                -- statement combiner_probe
                v_lock_free := pg_try_advisory_xact_lock_shared(v_key);
                -- end statement
                raise sqlstate 'DKW01';
            exception when sqlstate 'DKW01' then
                null;
            end;
            continue wait when not v_lock_free;
            -- No combiner at work or queued: queue for the combiner's lock,
            -- which a waiter that arrives later then waits behind, instead of
            -- trying again: tries would fail while any waiter briefly holds
            -- the shared lock.
            begin
                -- statement combiner_queue
                perform pg_advisory_xact_lock(v_key);
                -- end statement
                v_combiner := true;
            exception when lock_not_available then
                -- The wait's deadline has passed: the next round gives up.
                null;
            end;
        end loop;

        -- This call is the combiner.
        -- statement tickets_read
        select case when t.is_called then t.last_value else 0 end,
               (select r.last_value from docket_claim_tickets_read r)
          into v_issued, v_read
          from docket_claim_tickets t;
        -- end statement
        if v_issued <> v_read then
            perform setval('docket_claim_tickets_read', v_issued);
            -- The markers of this kind held by the callers waiting now, in ticket
            -- order, within the combined demand.
            -- statement markers_read
            select array_agg(q.marker order by q.marker)
              into v_markers
              from (select m.marker,
                           sum(m.marker % c_marker_demand) over (order by m.marker) as demand_through
                      from (select l.objid::bigint::integer as marker
                              from pg_locks l
                             where l.locktype = 'advisory'
                               and l.database = (select b.oid from pg_database b where b.datname = current_database())
                               and l.classid = v_kind::oid
                               and l.objsubid = 2
                               and l.mode = 'ShareLock'
                               and l.granted
                               and l.pid <> pg_backend_pid()) m
                     where not exists (select from docket_claim_deliveries d
                                        where d.ticket = m.marker / c_marker_demand)) q
             where q.demand_through <= c_combined_demand - p_demand;
            -- end statement
            -- Serve only the tickets whose served lock this call gets now
            -- (a waiter that gave up holds its own), then only those still
            -- without a delivery in a snapshot taken after the locks: a
            -- waiter that gave up and committed left its tombstone.
            -- statement markers_take
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where pg_try_advisory_xact_lock(v_served, w.marker / c_marker_demand);
            -- end statement
            -- statement markers_check
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where not exists (select from docket_claim_deliveries d
                                where d.ticket = w.marker / c_marker_demand);
            -- end statement
        end if;

        if v_markers is null then
            return query
                select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at,
                       row_number() over (order by c.visit_ordinal, c.outcome_ordinal nulls last)
                  from docket_tenant_fair_claim(p_now, p_cutoff, p_demand, p_max_attempts,
                                                p_preference, false) as c
                 where c.row_kind <> 'inspection';
            exit call;
        end if;

        v_waiting := (select sum(m % c_marker_demand)::integer from unnest(v_markers) as m);
        select array_agg(row(c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                             c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                             c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at)::docket_claim_outcome
                         order by c.visit_ordinal, c.outcome_ordinal nulls last)
          into v_outcomes
          from docket_tenant_fair_claim(p_now, p_cutoff, v_waiting + p_demand, p_max_attempts,
                                        p_preference, false) as c
         where c.row_kind <> 'inspection';
        v_outcomes := coalesce(v_outcomes, '{}');

        -- An engine error reaches only this caller; its waiters find no
        -- delivery and try again.
        if exists (select from unnest(v_outcomes) as o where o.row_kind = 'error') then
            v_waiting := 0;
        else
            -- Waiter i takes the outcomes numbered after the demands of the
            -- waiters before it, up to its own; the caller takes what is left.
            -- statement deliveries_write
            insert into docket_claim_deliveries (ticket, outcomes)
            select s.marker / c_marker_demand,
                   coalesce((select array_agg(v_outcomes[g.i] order by g.i)
                               from generate_subscripts(v_outcomes, 1) as g(i)
                              where g.i > s.demand_through - s.marker % c_marker_demand
                                and g.i <= s.demand_through), '{}')
              from (select w.marker,
                           sum(w.marker % c_marker_demand) over (order by w.ordinal) as demand_through
                      from unnest(v_markers) with ordinality as w(marker, ordinal)) s;
            -- end statement

            -- statement deliveries_expire
            delete from docket_claim_deliveries d
             where d.delivered_at <= clock_timestamp() - c_delivery_life;
            -- end statement
        end if;

        return query
            select (v_outcomes[g.i]).*, (g.i - v_waiting)::bigint
              from generate_subscripts(v_outcomes, 1) as g(i)
             where g.i > v_waiting
             order by g.i;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;

-- Name: docket_unique_bucket(timestamp with time zone, bigint); Type: FUNCTION; Schema: public; Owner: -

CREATE FUNCTION public.docket_unique_bucket(at timestamp with time zone, period_us bigint) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path TO 'public'
    AS $$
declare
    us bigint := round(extract(epoch from at) * 1000000)::bigint;
begin
    return to_timestamp((us - ((us % period_us) + period_us) % period_us) / 1000000.0);
end;
$$;

-- Name: docket_claim_deliveries; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_claim_deliveries (
    ticket integer NOT NULL,
    delivered_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    outcomes public.docket_claim_outcome[] NOT NULL,
    CONSTRAINT docket_claim_deliveries_ticket_check CHECK ((ticket > 0))
);

-- Name: docket_claim_partitions; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_claim_partitions (
    scope_key text NOT NULL,
    max_active integer,
    partition_version bigint DEFAULT 0 NOT NULL,
    admission_epoch bigint DEFAULT 0 NOT NULL,
    inserted_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    rate_limit integer,
    rate_period interval,
    rate_burst integer,
    rate_unlimited boolean DEFAULT false NOT NULL,
    rate_tat timestamp with time zone,
    CONSTRAINT docket_claim_partitions_epoch_check CHECK ((admission_epoch >= 0)),
    CONSTRAINT docket_claim_partitions_max_active_check CHECK ((max_active >= 1)),
    CONSTRAINT docket_claim_partitions_rate_check CHECK (((((rate_limit IS NULL) AND (rate_period IS NULL) AND (rate_burst IS NULL)) OR ((rate_limit IS NOT NULL) AND (rate_period IS NOT NULL) AND (rate_burst IS NOT NULL) AND ((rate_limit >= 1) AND (rate_limit <= 1000000)) AND ((rate_period >= '00:00:00.001'::interval) AND (rate_period <= '7 days'::interval)) AND ((rate_burst >= 0) AND (rate_burst <= 1000000)))) AND (NOT (rate_unlimited AND (rate_limit IS NOT NULL))))),
    CONSTRAINT docket_claim_partitions_version_check CHECK ((partition_version >= 0))
);

-- Name: docket_claim_policy; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_claim_policy (
    id smallint DEFAULT 1 NOT NULL,
    admission_mode text DEFAULT 'legacy'::text NOT NULL,
    max_active integer,
    configured_max_active integer,
    policy_version bigint DEFAULT 0 NOT NULL,
    scan_ring_position bigint DEFAULT 0 NOT NULL,
    initialized_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    park_dormant boolean DEFAULT false NOT NULL,
    configured_park_dormant boolean DEFAULT false NOT NULL,
    tenant_required boolean DEFAULT false NOT NULL,
    rate_limit integer,
    rate_period interval,
    rate_burst integer,
    paused boolean DEFAULT false NOT NULL,
    CONSTRAINT docket_claim_policy_configured_check CHECK ((configured_max_active >= 1)),
    CONSTRAINT docket_claim_policy_cursor_check CHECK ((scan_ring_position >= 0)),
    CONSTRAINT docket_claim_policy_max_active_check CHECK ((max_active >= 1)),
    CONSTRAINT docket_claim_policy_mode_check CHECK ((admission_mode = ANY (ARRAY['legacy'::text, 'tenant_fair'::text]))),
    CONSTRAINT docket_claim_policy_rate_check CHECK ((((rate_limit IS NULL) AND (rate_period IS NULL) AND (rate_burst IS NULL)) OR ((rate_limit IS NOT NULL) AND (rate_period IS NOT NULL) AND (rate_burst IS NOT NULL) AND ((rate_limit >= 1) AND (rate_limit <= 1000000)) AND ((rate_period >= '00:00:00.001'::interval) AND (rate_period <= '7 days'::interval)) AND ((rate_burst >= 0) AND (rate_burst <= 1000000))))),
    CONSTRAINT docket_claim_policy_shape_check CHECK ((((initialized_at IS NULL) = (max_active IS NULL)) AND ((initialized_at IS NOT NULL) OR (configured_max_active IS NULL)))),
    CONSTRAINT docket_claim_policy_singleton_check CHECK ((id = 1)),
    CONSTRAINT docket_claim_policy_version_check CHECK ((policy_version >= 0))
);

-- Name: docket_claim_schedule; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_claim_schedule (
    scope_key text NOT NULL,
    ring_position bigint NOT NULL,
    unfinished_count bigint DEFAULT 0 NOT NULL,
    inserted_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    parked_until timestamp with time zone,
    in_ring boolean GENERATED ALWAYS AS ((unfinished_count > 0)) STORED NOT NULL,
    CONSTRAINT docket_claim_schedule_position_check CHECK ((ring_position > 0)),
    CONSTRAINT docket_claim_schedule_unfinished_check CHECK ((unfinished_count >= 0))
);

-- Name: docket_claim_schedule_ring_position_seq; Type: SEQUENCE; Schema: public; Owner: -

ALTER TABLE public.docket_claim_schedule ALTER COLUMN ring_position ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.docket_claim_schedule_ring_position_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

-- Name: docket_claim_tickets; Type: SEQUENCE; Schema: public; Owner: -

CREATE SEQUENCE public.docket_claim_tickets
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    MAXVALUE 8388607
    CACHE 1
    CYCLE;

-- Name: docket_claim_tickets_read; Type: SEQUENCE; Schema: public; Owner: -

CREATE SEQUENCE public.docket_claim_tickets_read
    AS integer
    START WITH 0
    INCREMENT BY 1
    MINVALUE 0
    MAXVALUE 8388607
    CACHE 1;

-- Name: docket_runs_id_seq; Type: SEQUENCE; Schema: public; Owner: -

CREATE SEQUENCE public.docket_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: docket_runs_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -

ALTER SEQUENCE public.docket_runs_id_seq OWNED BY public.docket_runs.id;

-- Name: docket_schedules; Type: TABLE; Schema: public; Owner: -

CREATE TABLE public.docket_schedules (
    id bigint NOT NULL,
    tenant_id text,
    scope_key text GENERATED ALWAYS AS (COALESCE(tenant_id, ''::text)) STORED,
    name text NOT NULL,
    graph_id text NOT NULL,
    graph_hash text NOT NULL,
    state jsonb NOT NULL,
    cron_expr text,
    interval_seconds bigint,
    time_zone text DEFAULT 'UTC'::text NOT NULL,
    missed_ticks text DEFAULT 'skip'::text NOT NULL,
    paused boolean DEFAULT false NOT NULL,
    paused_at timestamp with time zone,
    next_tick_at timestamp with time zone NOT NULL,
    last_tick_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    version bigint DEFAULT 1 NOT NULL,
    CONSTRAINT docket_schedules_cadence_check CHECK (((cron_expr IS NULL) <> (interval_seconds IS NULL))),
    CONSTRAINT docket_schedules_interval_check CHECK (((interval_seconds IS NULL) OR (interval_seconds >= 1))),
    CONSTRAINT docket_schedules_missed_ticks_check CHECK ((missed_ticks = ANY (ARRAY['skip'::text, 'all'::text]))),
    CONSTRAINT docket_schedules_name_check CHECK ((name <> ''::text)),
    CONSTRAINT docket_schedules_paused_check CHECK ((paused = (paused_at IS NOT NULL))),
    CONSTRAINT docket_schedules_tenant_id_check CHECK (((tenant_id IS NULL) OR (tenant_id <> ''::text))),
    CONSTRAINT docket_schedules_time_zone_check CHECK ((time_zone <> ''::text)),
    CONSTRAINT docket_schedules_version_check CHECK ((version >= 1))
);

-- Name: docket_schedules_id_seq; Type: SEQUENCE; Schema: public; Owner: -

CREATE SEQUENCE public.docket_schedules_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: docket_schedules_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -

ALTER SEQUENCE public.docket_schedules_id_seq OWNED BY public.docket_schedules.id;

-- Name: docket_runs id; Type: DEFAULT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_runs ALTER COLUMN id SET DEFAULT nextval('public.docket_runs_id_seq'::regclass);

-- Name: docket_schedules id; Type: DEFAULT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_schedules ALTER COLUMN id SET DEFAULT nextval('public.docket_schedules_id_seq'::regclass);

-- Name: docket_claim_deliveries docket_claim_deliveries_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_deliveries
    ADD CONSTRAINT docket_claim_deliveries_pkey PRIMARY KEY (ticket);

-- Name: docket_claim_partitions docket_claim_partitions_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_partitions
    ADD CONSTRAINT docket_claim_partitions_pkey PRIMARY KEY (scope_key);

-- Name: docket_claim_policy docket_claim_policy_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_policy
    ADD CONSTRAINT docket_claim_policy_pkey PRIMARY KEY (id);

-- Name: docket_claim_schedule docket_claim_schedule_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_schedule
    ADD CONSTRAINT docket_claim_schedule_pkey PRIMARY KEY (scope_key);

-- Name: docket_claim_schedule docket_claim_schedule_ring_position_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_schedule
    ADD CONSTRAINT docket_claim_schedule_ring_position_key UNIQUE (ring_position);

-- Name: docket_runs docket_runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_runs
    ADD CONSTRAINT docket_runs_pkey PRIMARY KEY (id);

-- Name: docket_runs docket_runs_run_id_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_runs
    ADD CONSTRAINT docket_runs_run_id_key UNIQUE (run_id);

-- Name: docket_schedules docket_schedules_pkey; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_schedules
    ADD CONSTRAINT docket_schedules_pkey PRIMARY KEY (id);

-- Name: docket_schedules docket_schedules_scope_name_key; Type: CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_schedules
    ADD CONSTRAINT docket_schedules_scope_name_key UNIQUE (scope_key, name);

-- Name: docket_claim_partitions_paused_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_claim_partitions_paused_idx ON public.docket_claim_partitions USING btree (scope_key) WHERE paused;

-- Name: docket_claim_partitions_rate_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_claim_partitions_rate_idx ON public.docket_claim_partitions USING btree (rate_tat) WHERE (rate_tat IS NOT NULL);

-- Name: docket_claim_schedule_awake_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_claim_schedule_awake_idx ON public.docket_claim_schedule USING btree (ring_position) WHERE (in_ring AND (parked_until IS NULL));

-- Name: docket_claim_schedule_ring_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_claim_schedule_ring_idx ON public.docket_claim_schedule USING btree (ring_position) WHERE in_ring;

-- Name: docket_claim_schedule_wake_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_claim_schedule_wake_idx ON public.docket_claim_schedule USING btree (parked_until) WHERE (parked_until IS NOT NULL);

-- Name: docket_runs_admitted_claimed_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_admitted_claimed_idx ON public.docket_runs USING btree (scope_key, claimed_at, id) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NOT NULL) AND (tenant_admitted_at IS NOT NULL));

-- Name: docket_runs_admitted_ready_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_admitted_ready_idx ON public.docket_runs USING btree (scope_key, wake_at, id) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NULL) AND (tenant_admitted_at IS NOT NULL));

-- Name: docket_runs_expired_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_expired_idx ON public.docket_runs USING btree (claimed_at, id) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NOT NULL));

-- Name: docket_runs_finished_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_finished_idx ON public.docket_runs USING btree (finished_at, id) WHERE (status = ANY (ARRAY['done'::text, 'failed'::text, 'cancelled'::text]));

-- Name: docket_runs_list_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_list_idx ON public.docket_runs USING btree (scope_key, started_at DESC, run_id DESC);

-- Name: docket_runs_queued_ready_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_queued_ready_idx ON public.docket_runs USING btree (scope_key, wake_at, id) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NULL) AND (tenant_admitted_at IS NULL));

-- Name: docket_runs_ready_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_ready_idx ON public.docket_runs USING btree (wake_at, id) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NULL));

-- Name: docket_runs_run_id_prefix_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_run_id_prefix_idx ON public.docket_runs USING btree (run_id COLLATE "C");

-- Name: docket_runs_unadmitted_claimed_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_runs_unadmitted_claimed_idx ON public.docket_runs USING btree (scope_key) WHERE ((status = 'running'::text) AND (poisoned_at IS NULL) AND (claim_token IS NOT NULL) AND (tenant_admitted_at IS NULL));

-- Name: docket_runs_unique_idx; Type: INDEX; Schema: public; Owner: -

CREATE UNIQUE INDEX docket_runs_unique_idx ON public.docket_runs USING btree (scope_key, unique_key, COALESCE(unique_bucket, '-infinity'::timestamp with time zone)) WHERE (unique_key IS NOT NULL);

-- Name: docket_schedules_due_idx; Type: INDEX; Schema: public; Owner: -

CREATE INDEX docket_schedules_due_idx ON public.docket_schedules USING btree (next_tick_at, id) WHERE (NOT paused);

-- Name: docket_claim_partitions docket_claim_partitions_guard_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_claim_partitions_guard_trg BEFORE DELETE OR UPDATE OF scope_key ON public.docket_claim_partitions FOR EACH ROW EXECUTE FUNCTION public.docket_claim_partitions_guard();

-- Name: docket_claim_partitions docket_claim_partitions_guard_truncate_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_claim_partitions_guard_truncate_trg BEFORE TRUNCATE ON public.docket_claim_partitions FOR EACH STATEMENT EXECUTE FUNCTION public.docket_guard_truncate();

-- Name: docket_claim_partitions docket_claim_partitions_schedule_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_claim_partitions_schedule_trg AFTER INSERT ON public.docket_claim_partitions FOR EACH ROW EXECUTE FUNCTION public.docket_claim_partitions_schedule();

-- Name: docket_claim_schedule docket_claim_schedule_guard_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_claim_schedule_guard_trg BEFORE INSERT OR DELETE OR UPDATE OF scope_key, ring_position, unfinished_count ON public.docket_claim_schedule FOR EACH ROW EXECUTE FUNCTION public.docket_claim_schedule_guard();

-- Name: docket_claim_schedule docket_claim_schedule_guard_truncate_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_claim_schedule_guard_truncate_trg BEFORE TRUNCATE ON public.docket_claim_schedule FOR EACH STATEMENT EXECUTE FUNCTION public.docket_guard_truncate();

-- Name: docket_runs docket_runs_guard_scope_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_guard_scope_trg BEFORE UPDATE OF tenant_id ON public.docket_runs FOR EACH ROW EXECUTE FUNCTION public.docket_runs_guard_scope();

-- Name: docket_runs docket_runs_guard_truncate_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_guard_truncate_trg BEFORE TRUNCATE ON public.docket_runs FOR EACH STATEMENT EXECUTE FUNCTION public.docket_guard_truncate();

-- Name: docket_runs docket_runs_release_unique_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_release_unique_trg BEFORE UPDATE ON public.docket_runs FOR EACH ROW WHEN (((new.unique_key IS NOT NULL) AND (NOT (new.status = ANY (new.unique_statuses))))) EXECUTE FUNCTION public.docket_runs_release_unique();

-- Name: docket_runs docket_runs_require_tenant_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_require_tenant_trg AFTER INSERT ON public.docket_runs REFERENCING NEW TABLE AS docket_created_runs FOR EACH STATEMENT EXECUTE FUNCTION public.docket_runs_require_tenant();

-- Name: docket_runs docket_runs_track_delete_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_track_delete_trg AFTER DELETE ON public.docket_runs REFERENCING OLD TABLE AS docket_deleted_runs FOR EACH STATEMENT EXECUTE FUNCTION public.docket_runs_track_delete();

-- Name: docket_runs docket_runs_track_insert_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_track_insert_trg AFTER INSERT ON public.docket_runs REFERENCING NEW TABLE AS docket_created_runs FOR EACH STATEMENT EXECUTE FUNCTION public.docket_runs_track_insert();

-- Name: docket_runs docket_runs_track_status_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_track_status_trg AFTER UPDATE OF status ON public.docket_runs FOR EACH ROW WHEN (((old.status = ANY (ARRAY['running'::text, 'waiting'::text])) IS DISTINCT FROM (new.status = ANY (ARRAY['running'::text, 'waiting'::text])))) EXECUTE FUNCTION public.docket_runs_track_status();

-- Name: docket_runs docket_runs_wake_partition_trg; Type: TRIGGER; Schema: public; Owner: -

CREATE TRIGGER docket_runs_wake_partition_trg AFTER UPDATE ON public.docket_runs FOR EACH ROW WHEN (((new.status = 'running'::text) AND (new.poisoned_at IS NULL) AND (new.claim_token IS NULL) AND ((old.status <> 'running'::text) OR (old.poisoned_at IS NOT NULL) OR ((old.claim_token IS NULL) AND (old.wake_at IS DISTINCT FROM new.wake_at))))) EXECUTE FUNCTION public.docket_runs_wake_partition();

-- Name: docket_claim_schedule docket_claim_schedule_scope_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -

ALTER TABLE ONLY public.docket_claim_schedule
    ADD CONSTRAINT docket_claim_schedule_scope_fkey FOREIGN KEY (scope_key) REFERENCES public.docket_claim_partitions(scope_key) ON DELETE CASCADE;

-- The Worker's verdicts, many holders' commits in one statement: element i
-- of the arrays is one holder's commit, fenced like CommitRun on its exact
-- claim token and expected checkpoint_seq, with its own schedule and the
-- same column writes. Each result row names its commit by claim token; a
-- commit whose fence fails matches no row and is absent from the result,
-- and the others still commit. Claim tokens travel as text. An empty string
-- stands for a NULL state, checkpoint type or error kind; wake_at is read
-- only by the 'at' schedule and wake_delay_us only by 'after'. Parallel
-- unnests zip the arrays. The prior CTE locks the fenced rows in
-- (scope_key, id) order, so the status trigger's counter writes of two
-- concurrent batches take their scopes' locks in the same order;
-- marker_cleared compares the marker this statement replaced with the one
-- it wrote, as in CommitRun. last_commit_token records the claim that made
-- the commit, so a holder that lost a commit's answer can tell its own
-- commit from another claim's identical one (CommitApplied).
--
-- It is a function, not a statement the client prepares, for its plan. A
-- prepared statement whose arrays arrive as parameters is planned afresh on
-- every execution: the planner counts a bound array's elements, so a plan
-- for the one or two commits a Worker usually sends always looks cheaper
-- than the generic plan, which assumes ten, and planning this statement cost
-- more than running it. Here the one plan is kept for the session.
create or replace function docket_commit_runs(
    p_scope_keys text[],
    p_run_ids text[],
    p_claim_tokens text[],
    p_expected_seqs bigint[],
    p_steps integer[],
    p_states text[],
    p_checkpoint_types text[],
    p_statuses text[],
    p_schedules text[],
    p_wake_ats timestamptz[],
    p_wake_delays_us bigint[],
    p_attempt_changes text[],
    p_error_kinds text[],
    p_error_texts text[]
) returns table (
    claim_token uuid,
    checkpoint_seq bigint,
    step integer,
    marker_cleared boolean
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The right plan does not depend on how many commits a call carries.
    set plan_cache_mode = force_generic_plan
as $$
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

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


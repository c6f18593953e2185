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


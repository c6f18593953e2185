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


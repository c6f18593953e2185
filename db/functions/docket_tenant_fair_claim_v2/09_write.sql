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


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


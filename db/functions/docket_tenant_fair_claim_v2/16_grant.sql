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


                    v_visit_outcomes := cardinality(v_take);
                    if v_visit_outcomes > 0 then
                        v_pending := v_pending || v_take;
                        v_pending_grants := v_pending_grants || v_scope;
                        foreach v_item in array v_take loop
                            if v_item.kind = 'expired' then
                                v_served_expired := true;
                            else
                                v_served_ready := true;
                            end if;
                        end loop;
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
                        when v_withheld then 'denied'
                        when v_lead_locked then 'stale'
                        else 'lock_miss' end;
                end if;
            end if;

            if v_visit_outcomes = 0 then
                v_stepping := false;
            end if;


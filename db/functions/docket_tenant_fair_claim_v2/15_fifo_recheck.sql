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


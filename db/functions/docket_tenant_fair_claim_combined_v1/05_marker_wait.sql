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

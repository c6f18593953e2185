        <<wait>>
        loop
            if not v_combiner then
                -- statement combiner_lock
                v_combiner := pg_try_advisory_xact_lock(v_key);
                -- end statement
            end if;
            -- A combiner that never waited has no ticket, so nothing can
            -- have been delivered to it.
            exit wait when v_combiner and v_ticket is null;

        -- Only trace rows identify the call; production rows leave it null.
        if p_trace then
            v_call_token := gen_random_uuid();
        end if;

        loop
            v_position := null;
            v_win_index := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row. Parked mode walks the awake ring
                -- through its own index, one keyset step past the
                -- call-local cursor at a time, wrapping to the smallest
                -- position.
                if v_park then
                    -- statement ring_step_awake
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.parked_until is null
                       and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap_awake
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring and s.parked_until is null
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                elsif v_stepping then
                    -- The full-ring walk's step: the same keyset step
                    -- through the whole ring.
                    -- statement ring_step
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;

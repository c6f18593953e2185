        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        -- Work of a paused partition is no work here: no visit could serve
        -- it, so reserving a slot for it would only withhold one from the
        -- others. Entries of paused partitions at the head of the index are
        -- stepped over, each checked in docket_claim_partitions_paused_idx.
        -- The expired class is probed in two steps. The first reads the
        -- domain's oldest claim of all, in docket_runs_expired_idx, the one
        -- index whose predicate is the claimed state and whose order is the
        -- statement's, so it reads one entry whatever the statistics say
        -- (as Legacy's probe does): while no claim has
        -- expired, the common case, the class is empty and nothing else is
        -- read. Only when some claim has expired does the second step look
        -- for one that is admitted and outside a paused partition. A single
        -- statement asking that at once could also be served by the
        -- admitted indexes, and with statistics taken before the domain's
        -- claims piled up a generic plan chose one of them and filtered
        -- every live claim on each call.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                       and not exists (select from docket_claim_partitions pa
                                        where pa.scope_key = r.scope_key and pa.paused)
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
            if not v_served_expired then
                -- statement expired_probe
                select (select r.id from docket_runs r
                         where docket_run_marked_claimed(r)
                           and r.claimed_at < p_cutoff
                           and not exists (select from docket_claim_partitions pa
                                            where pa.scope_key = r.scope_key and pa.paused)
                         order by r.claimed_at, r.id
                         limit 1) is null
                  into v_served_expired;
                -- end statement
            end if;
        end if;


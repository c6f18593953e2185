                    if v_park then
                        -- Park: first the schedule row, without waiting. A
                        -- writer that holds it has not committed, and its own
                        -- write will set the row right, so the partition stays
                        -- awake. Once the lock is held, a writer that could make
                        -- a row of the scope eligible either committed before it
                        -- (the next statement's snapshot, taken after the lock,
                        -- sees its row) or waits for this call and writes the
                        -- schedule row after the park. The dormancy probe of
                        -- the lock statement above is older than the lock, so
                        -- the park re-checks dormancy in its own snapshot.
                        -- statement park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- Dormant: no claimed running row (an expired steal
                            -- depends on the caller's cutoff, a live claim will
                            -- be released) and no healthy unclaimed running row
                            -- due at p_now. Parked until the earliest wake_at of
                            -- the scope's healthy unclaimed running rows, else
                            -- for good (a write wakes it).
                            -- A partition whose last unfinished run finished
                            -- after the probe has left the ring: it is not
                            -- walked, and its next run makes it a member again,
                            -- so it is not parked.
                            -- statement park
                            update docket_claim_schedule s
                               set parked_until = coalesce(least(
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1),
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1)), 'infinity')
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
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

            else
                -- The lock statement also probes the three pages, so a visit
                -- with nothing due and nothing expired ends as empty_page
                -- without the candidate statement. Its snapshot predates the
                -- lock, which for an empty page only means the visit saw the
                -- scope a moment earlier; a page found here is read again, in
                -- a snapshot taken after the lock, by the candidate statement.
                -- A paused partition's pages are not probed: the case
                -- evaluates its branch only for an unpaused one. A position
                -- the ring window's probe found a page at is not probed
                -- again: the candidate statement reads its pages anyway, and
                -- a page gone since ends the visit there as empty_page, the
                -- disposition this probe would have given (the full-ring walk
                -- never parks, so the probe decides nothing else).
                -- statement partition_lock
                select pa.max_active, pa.paused, pa.rate_limit, pa.rate_period, pa.rate_burst,
                       pa.rate_unlimited, pa.rate_tat,
                       case when pa.paused then false when v_win_index is not null then true else
                       (select true from docket_runs r
                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                         order by r.wake_at, r.id
                         limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                            order by r.wake_at, r.id
                            limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                            order by r.claimed_at, r.id
                            limit 1) is not null
                       end
                  into v_override, v_paused, v_part_rate_limit, v_part_rate_period, v_part_rate_burst,
                       v_part_rate_unlimited, v_rate_tat, v_has_page
                  from docket_claim_partitions pa
                 where pa.scope_key = v_scope
                   for no key update skip locked;
                -- end statement

                if not found then
                    v_disposition := 'partition_lock_skip';
                elsif v_paused then
                    v_disposition := 'paused';
                elsif not v_has_page then
                    v_disposition := 'empty_page';

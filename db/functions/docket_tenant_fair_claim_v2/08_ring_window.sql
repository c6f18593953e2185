                else
                    if v_win_next > cardinality(v_win_positions) then
                        -- The next window: the distinct ring positions that
                        -- the next steps reach, strictly after the cursor
                        -- and then wrapping once to the smallest position,
                        -- never more than the inspections left. Each comes
                        -- with the probe the partition lock statement makes
                        -- (one per page), taken in this statement's
                        -- snapshot; a wrap past the window reads a new one,
                        -- which may revisit positions.
                        v_window := least(c_inspections - v_visit,
                                          case when cardinality(v_win_positions) = 0
                                               then least(c_first_window, v_remaining)
                                               else c_inspections end);
                        -- statement ring_window
                        select coalesce(array_agg(w.pos order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.scope order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.has_page order by w.lap, w.pos), '{}')
                          into v_win_positions, v_win_scopes, v_win_pages
                          from (select n.pos, n.scope, n.lap,
                                       coalesce(ar.found or qr.found or ex.found, false) as has_page
                                  from ((select s.ring_position as pos, s.scope_key as scope, 0 as lap
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position > v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        union all
                                        (select s.ring_position, s.scope_key, 1
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position <= v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        order by lap, pos
                                        limit v_window) as n
                                  -- One probe per page and position, each a
                                  -- lateral join and not an EXISTS in the
                                  -- select list: PostgreSQL 13 plans such an
                                  -- EXISTS with a hashed alternative that
                                  -- reads every due run of the domain.
                                  -- docket_runs_admitted_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as ar on true
                                  -- docket_runs_queued_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as qr on true
                                  -- docket_runs_admitted_claimed_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                                                      order by r.claimed_at, r.id
                                                      limit 1) as ex on true) as w;
                        -- end statement
                        v_win_next := 1;
                        v_run_end := 0;
                    end if;
                    if v_win_next <= cardinality(v_win_positions) then
                        v_win_index := v_win_next;
                        v_win_next := v_win_next + 1;
                        v_position := v_win_positions[v_win_index];
                        v_scope := v_win_scopes[v_win_index];
                    end if;
                end if;
            end if;


            v_visit := v_visit + 1;
            if v_xid is null then
                v_xid := txid_current();
            end if;
            v_cursor_before := v_cursor;
            v_cursor := v_position;
            v_visit_outcomes := 0;
            v_parked := false;
            v_parked_until := null;

            if v_win_index is not null and not v_win_pages[v_win_index] then
                -- A run of consecutive window positions whose probe found
                -- no page is locked when the walk reaches its first one,
                -- with the partition lock of each, without waiting; the
                -- window's probe stands for each lock statement's probe.
                -- The run ends before the next position with a page, so
                -- no visit in between can end the call: every partition
                -- locked here is one the walk inspects.
                if v_win_index > v_run_end then
                    v_run_end := v_win_index;
                    while v_run_end < cardinality(v_win_pages) and not v_win_pages[v_run_end + 1] loop
                        v_run_end := v_run_end + 1;
                    end loop;
                    v_run_scopes := v_win_scopes[v_win_index:v_run_end];
                    -- The lock returns each partition's newest committed
                    -- version, so a pause committed after the window's
                    -- snapshot is seen here.
                    -- statement empty_run_lock
                    select coalesce(array_agg(l.scope_key), '{}'),
                           coalesce(array_agg(l.scope_key) filter (where l.paused), '{}')
                      into v_run_locked, v_run_paused
                      from (select pa.scope_key, pa.paused
                              from docket_claim_partitions pa
                             where pa.scope_key = any (v_run_scopes)
                               for no key update skip locked) as l;
                    -- end statement
                    if not p_trace and v_run_end > v_win_index then
                        -- Without trace rows the rest of the run needs no
                        -- step of its own: each of its positions is one
                        -- inspection without an outcome, so the walk counts
                        -- them and moves the cursor to the run's last one.
                        -- No position of the run can hold unwritten
                        -- outcomes of this call: those rows are still due
                        -- in every snapshot until written, so the window's
                        -- probe would have found its page.
                        v_visit := v_visit + (v_run_end - v_win_index);
                        v_cursor := v_win_positions[v_run_end];
                        v_win_next := v_run_end + 1;
                    end if;
                end if;
                v_disposition := case when v_scope = any (v_run_paused) then 'paused'
                                      when v_scope = any (v_run_locked) then 'empty_page'
                                      else 'partition_lock_skip' end;

        loop
            exit when cardinality(v_take_ids) >= v_limit;
            -- Demand one reads the other class only when the preferred one
            -- has nothing, so it locks no row it will not take.
            if not v_have_ready and not v_ready_done
                    and (p_demand >= 2 or p_preference is distinct from 'expired' or v_expired_done) then
                fetch v_ready_rows into v_ready_id, v_ready_eligible, v_ready_poison, v_ready_marked;
                v_have_ready := found;
                v_ready_done := not found;
            end if;
            if not v_have_expired and not v_expired_done
                    and (p_demand >= 2 or p_preference is distinct from 'ready' or v_ready_done) then
                fetch v_expired_rows into v_expired_id, v_expired_eligible, v_expired_poison;
                v_have_expired := found;
                v_expired_done := not found;
            end if;

            if v_have_ready and v_have_expired then
                -- Demand >= 2 takes an unserved class head first; otherwise
                -- (demand one reads both only without a preference) the
                -- older eligible time wins.
                v_pick_ready := case
                    when p_demand >= 2 and v_served_ready <> v_served_expired then not v_served_ready
                    else (v_ready_eligible, v_ready_id) <= (v_expired_eligible, v_expired_id) end;
            elsif v_have_ready then
                v_pick_ready := true;
            elsif v_have_expired then
                v_pick_ready := false;
            elsif v_ready_done and v_expired_done then
                exit;
            else
                continue;
            end if;

            -- Last-slot rule: the final outcome is kept for a nonempty class
            -- that is still unserved; that class has no row left here.
            exit when p_demand >= 2 and v_remaining = 1
                and not (case when v_pick_ready then v_served_expired else v_served_ready end);

            if v_pick_ready then
                v_take_ids := v_take_ids || v_ready_id;
                v_take_kinds := v_take_kinds
                    || case when v_ready_marked then 'admitted_ready' else 'queued_ready' end;
                v_take_poison := v_take_poison || v_ready_poison;
                v_take_eligible := v_take_eligible || v_ready_eligible;
                v_served_ready := true;
                v_have_ready := false;
            else
                v_take_ids := v_take_ids || v_expired_id;
                v_take_kinds := v_take_kinds || 'expired'::text;
                v_take_poison := v_take_poison || v_expired_poison;
                v_take_eligible := v_take_eligible || v_expired_eligible;
                v_served_expired := true;
                v_have_expired := false;
            end if;
            v_remaining := v_remaining - 1;
        end loop;
        close v_ready_rows;
        close v_expired_rows;


        -- An engine error reaches only this caller; its waiters find no
        -- delivery and try again.
        if exists (select from unnest(v_outcomes) as o where o.row_kind = 'error') then
            v_waiting := 0;
        else
            -- Waiter i takes the outcomes numbered after the demands of the
            -- waiters before it, up to its own; the caller takes what is left.
            -- statement deliveries_write
            insert into docket_claim_deliveries (ticket, outcomes)
            select s.marker / c_marker_demand,
                   coalesce((select array_agg(v_outcomes[g.i] order by g.i)
                               from generate_subscripts(v_outcomes, 1) as g(i)
                              where g.i > s.demand_through - s.marker % c_marker_demand
                                and g.i <= s.demand_through), '{}')
              from (select w.marker,
                           sum(w.marker % c_marker_demand) over (order by w.ordinal) as demand_through
                      from unnest(v_markers) with ordinality as w(marker, ordinal)) s;
            -- end statement

            -- statement deliveries_expire
            delete from docket_claim_deliveries d
             where d.delivered_at <= clock_timestamp() - c_delivery_life;
            -- end statement
        end if;


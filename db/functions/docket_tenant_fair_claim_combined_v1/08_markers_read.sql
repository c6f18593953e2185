        -- This call is the combiner.
        -- statement tickets_read
        select case when t.is_called then t.last_value else 0 end,
               (select r.last_value from docket_claim_tickets_read r)
          into v_issued, v_read
          from docket_claim_tickets t;
        -- end statement
        if v_issued <> v_read then
            perform setval('docket_claim_tickets_read', v_issued);
            -- The markers of this kind held by the callers waiting now, in ticket
            -- order, within the combined demand.
            -- statement markers_read
            select array_agg(q.marker order by q.marker)
              into v_markers
              from (select m.marker,
                           sum(m.marker % c_marker_demand) over (order by m.marker) as demand_through
                      from (select l.objid::bigint::integer as marker
                              from pg_locks l
                             where l.locktype = 'advisory'
                               and l.database = (select b.oid from pg_database b where b.datname = current_database())
                               and l.classid = v_kind::oid
                               and l.objsubid = 2
                               and l.mode = 'ShareLock'
                               and l.granted
                               and l.pid <> pg_backend_pid()) m
                     where not exists (select from docket_claim_deliveries d
                                        where d.ticket = m.marker / c_marker_demand)) q
             where q.demand_through <= c_combined_demand - p_demand;
            -- end statement
            -- Serve only the tickets whose served lock this call gets now
            -- (a waiter that gave up holds its own), then only those still
            -- without a delivery in a snapshot taken after the locks: a
            -- waiter that gave up and committed left its tombstone.
            -- statement markers_take
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where pg_try_advisory_xact_lock(v_served, w.marker / c_marker_demand);
            -- end statement
            -- statement markers_check
            select array_agg(w.marker order by w.ordinal)
              into v_markers
              from unnest(v_markers) with ordinality as w(marker, ordinal)
             where not exists (select from docket_claim_deliveries d
                                where d.ticket = w.marker / c_marker_demand);
            -- end statement
        end if;


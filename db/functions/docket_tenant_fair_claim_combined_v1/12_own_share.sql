        return query
            select (v_outcomes[g.i]).*, (g.i - v_waiting)::bigint
              from generate_subscripts(v_outcomes, 1) as g(i)
             where g.i > v_waiting
             order by g.i;
    end;


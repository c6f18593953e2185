            -- A waiter collects what a combiner delivered to its ticket; so
            -- does a caller that became the combiner after waiting, since a
            -- combiner before it may have served the ticket.
            -- statement delivery_collect
            delete from docket_claim_deliveries d
             where d.ticket = v_ticket
            returning d.outcomes into v_own;
            -- end statement
            if found then
                perform set_config('synchronous_commit', 'off', true);
                return query
                    select (v_own[g.i]).*, g.i::bigint
                      from generate_subscripts(v_own, 1) as g(i)
                     order by g.i;
                exit call;
            end if;
            exit wait when v_combiner;
            if v_timed_out then
                -- Nothing was delivered: withdraw the ticket.
                -- statement tombstone_write
                insert into docket_claim_deliveries (ticket, outcomes)
                values (v_ticket, '{}');
                -- end statement
                row_kind := 'error';
                error_reason := 'lock_contention';
                return next;
                exit call;
            end if;

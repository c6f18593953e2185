            -- Not served. A combiner that holds the lock now, or a caller
            -- queued for it, reads the markers after this one was taken, so
            -- the caller waits for that one's commit in shared mode, with the
            -- other waiters it serves; they would otherwise take the lock one
            -- after another, each only to collect its delivery. The probe is
            -- a shared try in a subtransaction: it fails only while the lock
            -- is held or awaited in exclusive mode, not while other waiters
            -- briefly hold it shared.
            begin
                -- statement combiner_probe
                v_lock_free := pg_try_advisory_xact_lock_shared(v_key);
                -- end statement
                raise sqlstate 'DKW01';
            exception when sqlstate 'DKW01' then
                null;
            end;
            continue wait when not v_lock_free;
            -- No combiner at work or queued: queue for the combiner's lock,
            -- which a waiter that arrives later then waits behind, instead of
            -- trying again: tries would fail while any waiter briefly holds
            -- the shared lock.
            begin
                -- statement combiner_queue
                perform pg_advisory_xact_lock(v_key);
                -- end statement
                v_combiner := true;
            exception when lock_not_available then
                -- The wait's deadline has passed: the next round gives up.
                null;
            end;
        end loop;


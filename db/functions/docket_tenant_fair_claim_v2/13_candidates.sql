                else
                    v_cap := coalesce(v_override, v_default_cap);
                    v_limit := least(c_grant_outcomes, v_remaining);
                    v_admitted := null;
                    v_frozen := 0;
                    v_no_slot := false;
                    v_lead_locked := false;
                    v_withheld := false;
                    v_walk_served_ready := v_served_ready;
                    v_walk_served_expired := v_served_expired;
                    v_walk_remaining := v_remaining;
                    v_queue_no := 0;
                    v_next_queue := 1;
                    v_take := '{}';
                    v_promote_ids := '{}';
                    v_moved_ids := '{}';
                    v_refused_ids := '{}';
                    -- The partition's own rate, else none when it is exempt,
                    -- else the domain's default.
                    if v_part_rate_limit is not null then
                        v_rate_step := docket_rate_step(v_part_rate_limit, v_part_rate_period);
                        v_rate_tolerance := v_rate_step * v_part_rate_burst;
                    elsif v_part_rate_unlimited then
                        v_rate_step := null;
                        v_rate_tolerance := null;
                    else
                        v_rate_step := v_default_rate_step;
                        v_rate_tolerance := v_default_rate_tolerance;
                    end if;
                    v_rate_promoted := 0;
                    v_rate_denied := false;

                    -- One statement after the partition lock, so its snapshot
                    -- (admitted count and pages) sees every grant committed
                    -- before the lock. The pages are MVCC reads: admitted-ready
                    -- and expired rows up to K each, and the queued FIFO up to
                    -- this grant's limit, since promotion is contiguous from the
                    -- head and could never reach further. They are ranked, at
                    -- most K ids are frozen, and exactly those are locked without
                    -- waiting, in rank order. A lock returns the newest committed
                    -- version of its row, which the walk rechecks.
                    --
                    -- Freezing: the first K / 4 rows of each class whose head
                    -- matters (with demand >= 2 a class not yet served in this
                    -- call, with demand 1 both) first; admitted before queued;
                    -- with demand 1 the preferred class; then the FIFO order for
                    -- queued rows, and poison first, eligible time and id for the
                    -- others. A class's rows are its admitted-ready rows then its
                    -- queued FIFO (ready), resp. its expired rows, each by
                    -- eligible time and id. Queued rows rank among themselves in
                    -- FIFO order, so the frozen ones are a prefix of the FIFO.
                    --
                    -- The walk meets the rows after locking: admitted before
                    -- queued; then each class head whose place matters, chosen
                    -- among the rows this visit locked and found fresh (the
                    -- oldest admitted one of its class); with demand 1 the
                    -- preferred class; poison first, eligible time and id. The
                    -- queued rows come last in FIFO order and are numbered 1, 2,
                    -- ...; a queued row held elsewhere or stale still takes its
                    -- number, so it blocks every promotion behind it.
                    --
                    -- The admitted count only matters when a queued row could
                    -- meet the cap. Admitted and queued rows are both unfinished,
                    -- so while the scope has no more unfinished runs than its
                    -- cap no promotion of this visit can reach it, and the count
                    -- is skipped. Counting stops at cap + Q, beyond which at most
                    -- Q admitted poisons could never bring it under the cap.
                    for v_candidate in
                        -- statement candidates
                        with pages as (
                            -- Admitted-ready: docket_runs_admitted_ready_idx.
                            (select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit c_frozen)
                            union all
                            -- Queued-ready, the FIFO: docket_runs_queued_ready_idx.
                            (select r.id, 'queued_ready', 'ready',
                                    r.wake_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit v_limit)
                            union all
                            -- Expired admitted claims: docket_runs_admitted_claimed_idx.
                            (select r.id, 'expired', 'expired',
                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                              order by r.claimed_at, r.id
                              limit c_frozen)
                        ), ranked as (
                            select p.id, p.kind, p.class, p.eligible,
                                   case when row_number() over (partition by p.class
                                                 order by p.kind = 'queued_ready', p.eligible, p.id) <= c_class_reserve
                                             and (p_demand = 1 or not (case p.class
                                                 when 'ready' then v_served_ready
                                                 else v_served_expired end))
                                        then 0 else 1 end as reserved,
                                   case when p_demand = 1 and p.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when p.kind <> 'queued_ready' and p.poison then 0 else 1 end
                                       as poison_first
                              from pages p
                        ), frozen as (
                            select h.id, h.kind, h.class, h.eligible, h.preference_last, h.poison_first
                              from ranked h
                             order by h.reserved, h.kind = 'queued_ready', h.preference_last,
                                      h.poison_first, h.eligible, h.id
                             limit c_frozen
                        ), locked as (
                            -- Each frozen id by its primary key (docket_runs_pkey), in
                            -- rank order, without waiting; the locked version is the
                            -- newest committed one, rechecked against its kind.
                            select f.id, f.kind, f.class, f.eligible, f.preference_last, f.poison_first,
                                   l.id is not null as is_locked,
                                   coalesce(l.scope_key = v_scope
                                       and case f.kind
                                           when 'expired' then l.marked_claimed and l.claimed_at < p_cutoff
                                           when 'admitted_ready' then l.marked_unclaimed and l.wake_at <= p_now
                                           else l.unmarked_unclaimed and l.wake_at <= p_now
                                           end, false) as is_fresh,
                                   coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                                   case when f.kind = 'expired' then l.claimed_at else l.wake_at end
                                       as locked_eligible,
                                   f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                              from frozen f
                              left join lateral (
                                    select r.id, r.scope_key, r.claimed_at, r.wake_at, r.claim_attempts,
                                           docket_run_marked_claimed(r) as marked_claimed,
                                           docket_run_marked_unclaimed(r) as marked_unclaimed,
                                           docket_run_unmarked_unclaimed(r) as unmarked_unclaimed
                                      from docket_runs r
                                     where r.id = f.id
                                       for update skip locked) as l on true
                        ), judged as (
                            select k.id, k.kind, k.is_locked, k.is_fresh, k.is_poison, k.locked_eligible,
                                   k.is_moved, k.preference_last, k.poison_first, k.eligible,
                                   -- The scope's count (docket_claim_schedule_pkey), and its
                                   -- admitted rows only when it has more unfinished runs
                                   -- than its cap: the unclaimed ones on the admitted-ready
                                   -- page's index and the claimed ones on the expired page's,
                                   -- each read up to the bound, so the sum read up to it is
                                   -- exact.
                                   case when (select s.unfinished_count
                                                from docket_claim_schedule s
                                               where s.scope_key = v_scope) > v_cap
                                        then least((select count(*)
                                                      from (select
                                                              from docket_runs r
                                                             where r.scope_key = v_scope
                                                               and docket_run_marked_unclaimed(r)
                                                             limit v_cap::bigint + c_grant_outcomes) as a)
                                                   + (select count(*)
                                                        from (select
                                                                from docket_runs r
                                                               where r.scope_key = v_scope
                                                                 and docket_run_marked_claimed(r)
                                                               limit v_cap::bigint + c_grant_outcomes) as c),
                                                   v_cap::bigint + c_grant_outcomes)
                                        else 0 end as admitted,
                                   -- The class heads are chosen among the rows this visit
                                   -- locked and rechecked: the oldest fresh admitted row of
                                   -- each class, so a head held elsewhere hands its place to
                                   -- the next row of its class.
                                   coalesce(case when k.kind <> 'queued_ready' and k.is_fresh
                                                      and (p_demand = 1 or not (case k.class
                                                          when 'ready' then v_served_ready
                                                          else v_served_expired end))
                                                 then row_number() over (
                                                          partition by k.class, k.kind <> 'queued_ready' and k.is_fresh
                                                          order by k.eligible, k.id) = 1
                                                 end, false) as is_head
                              from locked k
                        )
                        select j.id, j.kind, j.admitted, j.is_locked, j.is_fresh, j.is_poison,
                               j.locked_eligible as eligible, j.is_moved
                          from judged j
                         order by j.kind = 'queued_ready', j.is_head desc, j.preference_last,
                                  j.poison_first, j.eligible, j.id
                        -- end statement

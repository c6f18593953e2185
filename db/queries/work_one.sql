-- name: LockOtherClaimableRuns :one
-- dockettest.Work's fence around one run: inside a transaction of its own,
-- it locks every other healthy running run, so a claim call made meanwhile
-- on another connection skips them (both engines lock candidates with skip
-- locked) and can lease only the run under test, by the engine's own rules.
-- Rows another transaction holds are skipped here and by the claim alike.
select count(*)::bigint as locked
  from (select r.id
          from /*schema*/docket_runs r
         where r.run_id <> sqlc.arg(run_id) and /*schema*/docket_run_healthy(r)
           for update skip locked) as l;

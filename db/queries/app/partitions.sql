-- name: GetClaimPolicy :one
select * from /*schema*/docket_claim_policy where id = 1;

-- name: ListClaimSchedule :many
select s.scope_key, s.ring_position, s.unfinished_count,
       p.max_active, p.partition_version, p.admission_epoch
  from /*schema*/docket_claim_schedule s
  join /*schema*/docket_claim_partitions p using (scope_key)
 order by s.ring_position;

-- name: ListRingPositions :many
-- The ring proper: positions that own unfinished work, in cursor order.
select ring_position, scope_key from /*schema*/docket_claim_schedule
 where in_ring
 order by ring_position;

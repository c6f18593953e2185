package db

// Column is one column a Docket schema must have.
type Column struct {
	// Table is the table's name.
	Table string
	// Name is the column's name.
	Name string
}

// Columns lists every column of every Docket table in a schema migrated to
// the newest embedded migration, table by table in column order. Startup
// requires each of them, so a schema applied by any tool opens when it has
// Docket's shape; a test compares this list with a migrated catalog.
var Columns = []Column{
	{"docket_runs", "id"},
	{"docket_runs", "run_id"},
	{"docket_runs", "tenant_id"},
	{"docket_runs", "scope_key"},
	{"docket_runs", "graph_id"},
	{"docket_runs", "graph_hash"},
	{"docket_runs", "status"},
	{"docket_runs", "step"},
	{"docket_runs", "state"},
	{"docket_runs", "checkpoint_seq"},
	{"docket_runs", "latest_checkpoint_type"},
	{"docket_runs", "claim_token"},
	{"docket_runs", "claimed_at"},
	{"docket_runs", "wake_at"},
	{"docket_runs", "claim_attempts"},
	{"docket_runs", "claim_abandons"},
	{"docket_runs", "poisoned_at"},
	{"docket_runs", "poison_reason"},
	{"docket_runs", "inserted_at"},
	{"docket_runs", "started_at"},
	{"docket_runs", "updated_at"},
	{"docket_runs", "finished_at"},
	{"docket_runs", "tenant_admitted_at"},
	{"docket_runs", "attempt"},
	{"docket_runs", "errors"},
	{"docket_runs", "trace_context"},
	{"docket_claim_policy", "id"},
	{"docket_claim_policy", "admission_mode"},
	{"docket_claim_policy", "max_active"},
	{"docket_claim_policy", "configured_max_active"},
	{"docket_claim_policy", "policy_version"},
	{"docket_claim_policy", "scan_ring_position"},
	{"docket_claim_policy", "initialized_at"},
	{"docket_claim_policy", "updated_at"},
	{"docket_claim_policy", "park_dormant"},
	{"docket_claim_policy", "configured_park_dormant"},
	{"docket_claim_partitions", "scope_key"},
	{"docket_claim_partitions", "max_active"},
	{"docket_claim_partitions", "partition_version"},
	{"docket_claim_partitions", "admission_epoch"},
	{"docket_claim_partitions", "inserted_at"},
	{"docket_claim_partitions", "updated_at"},
	{"docket_claim_partitions", "paused"},
	{"docket_claim_schedule", "scope_key"},
	{"docket_claim_schedule", "ring_position"},
	{"docket_claim_schedule", "unfinished_count"},
	{"docket_claim_schedule", "inserted_at"},
	{"docket_claim_schedule", "updated_at"},
	{"docket_claim_schedule", "parked_until"},
	{"docket_claim_schedule", "in_ring"},
	{"docket_schedules", "id"},
	{"docket_schedules", "tenant_id"},
	{"docket_schedules", "scope_key"},
	{"docket_schedules", "name"},
	{"docket_schedules", "graph_id"},
	{"docket_schedules", "graph_hash"},
	{"docket_schedules", "state"},
	{"docket_schedules", "cron_expr"},
	{"docket_schedules", "interval_seconds"},
	{"docket_schedules", "time_zone"},
	{"docket_schedules", "missed_ticks"},
	{"docket_schedules", "paused"},
	{"docket_schedules", "paused_at"},
	{"docket_schedules", "next_tick_at"},
	{"docket_schedules", "last_tick_at"},
	{"docket_schedules", "created_at"},
	{"docket_schedules", "updated_at"},
	{"docket_schedules", "version"},
}

-- sqlc cannot type the result columns of a RETURNS TABLE function. These
-- sqlc-only declarations, never installed, give it the claim functions' result
-- shape as OUT parameters under the same names, so the claim queries get
-- typed, nullable columns. The real functions are in db/functions; a test
-- compares this shape with the installed functions.
create function docket_tenant_fair_claim(
    out row_kind text, out error_reason text, out run_id text, out tenant_id text,
    out graph_id text, out graph_hash text, out checkpoint_seq bigint,
    out claim_token uuid, out claimed_at timestamptz, out claim_attempt integer,
    out poisoned_at timestamptz, out poison_reason text, out work_class text,
    out eligible_at timestamptz, out call_token uuid, out transaction_id bigint,
    out visit_ordinal integer, out outcome_ordinal integer, out demand integer,
    out cursor_before bigint, out cursor_after bigint, out ring_position bigint,
    out scope_key text, out disposition text, out outcome_count integer,
    out epoch_delta integer
) language sql as $$ select null::text $$;

create function docket_legacy_claim(
    out row_kind text, out error_reason text, out run_id text, out tenant_id text,
    out graph_id text, out graph_hash text, out checkpoint_seq bigint,
    out claim_token uuid, out claimed_at timestamptz, out claim_attempt integer,
    out poisoned_at timestamptz, out poison_reason text, out work_class text,
    out eligible_at timestamptz, out call_token uuid, out transaction_id bigint,
    out visit_ordinal integer, out outcome_ordinal integer, out demand integer,
    out cursor_before bigint, out cursor_after bigint, out ring_position bigint,
    out scope_key text, out disposition text, out outcome_count integer,
    out epoch_delta integer
) language sql as $$ select null::text $$;

create function docket_tenant_fair_claim_combined(
    out row_kind text, out error_reason text, out run_id text, out tenant_id text,
    out graph_id text, out graph_hash text, out checkpoint_seq bigint,
    out claim_token uuid, out claimed_at timestamptz, out claim_attempt integer,
    out poisoned_at timestamptz, out poison_reason text, out work_class text,
    out eligible_at timestamptz, out outcome_ordinal bigint
) language sql as $$ select null::text $$;

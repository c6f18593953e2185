
drop function docket_tenant_fair_claim_combined(timestamptz, timestamptz, integer, integer, text, bigint);
drop table docket_claim_requests;
drop type docket_claim_outcome;


alter table docket_runs drop column trace_context;


drop table docket_runs;


drop table docket_schedules;

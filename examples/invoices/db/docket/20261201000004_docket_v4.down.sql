
-- Dropping the columns drops their constraints with them.
alter table docket_runs
    drop column errors,
    drop column attempt;


drop index docket_runs_finished_idx;

-- A history that holds retry entries does not satisfy V7's check: they are
-- dropped with the check, as V7 has no way to show them.
alter table docket_runs drop constraint docket_runs_errors_entry_check;
update docket_runs
   set errors = coalesce((select jsonb_agg(e order by n)
                            from jsonb_array_elements(errors) with ordinality as x(e, n)
                           where e ->> 'kind' <> 'retry'), '[]')
 where jsonb_path_exists(errors, '$[*] ? (@.kind == "retry")');
alter table docket_runs
    add constraint docket_runs_errors_entry_check
        check (not jsonb_path_exists(errors,
            '$[*] ? (@.type() != "object"
                     || !(@.attempt.type() == "number") || @.attempt < 1
                     || !(@.at.type() == "string")
                     || !(@.error.type() == "string")
                     || !(@.kind == "error" || @.kind == "panic"
                          || @.kind == "no_result" || @.kind == "invalid_result"))'));

drop function docket_run_phase(docket_runs, timestamptz);

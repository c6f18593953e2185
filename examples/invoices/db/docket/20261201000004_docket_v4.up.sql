
-- Schema V4: the handler-attempt counter and the bounded error history of a
-- run. Both are written only by the fenced commit that ends a handler
-- attempt, in the same UPDATE as the verdict, so they cost no round trip and
-- can never disagree with the run's status. No function changes: the claim
-- engines neither read nor write them.

-- attempt counts the handler attempts that ended in a retry or failure
-- verdict since the run's last Complete, Continue or WaitExternal verdict
-- (or its insertion, or an operator's retry of a finished run). errors keeps
-- the newest failures of those attempts, oldest first; the 20-entry bound
-- keeps the row small however often a run is retried, and each entry's text
-- is cut to 2,000 bytes by the writer (a check cannot measure a jsonb
-- string in bytes).
alter table docket_runs
    add column attempt integer not null default 0,
    add column errors jsonb not null default '[]',
    add constraint docket_runs_attempt_check check (attempt >= 0),
    add constraint docket_runs_errors_array_check check (jsonb_typeof(errors) = 'array'),
    -- The case keeps a non-array to the array check's error instead of a
    -- jsonb_array_length failure.
    add constraint docket_runs_errors_bound_check
        check (case when jsonb_typeof(errors) = 'array' then jsonb_array_length(errors) <= 20 else true end),
    add constraint docket_runs_errors_entry_check
        check (not jsonb_path_exists(errors,
            '$[*] ? (@.type() != "object"
                     || !(@.attempt.type() == "number") || @.attempt < 1
                     || !(@.at.type() == "string")
                     || !(@.error.type() == "string")
                     || !(@.kind == "error" || @.kind == "panic"
                          || @.kind == "no_result" || @.kind == "invalid_result"))'));


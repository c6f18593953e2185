
drop function docket_commit_runs(text[], text[], text[], bigint[], integer[], text[], text[], text[], text[],
                                 timestamptz[], bigint[], text[], text[], text[]);

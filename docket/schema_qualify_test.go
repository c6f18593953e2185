package docket

import "testing"

func TestQualifyNamesDocketRelationsOnly(t *testing.T) {
	q := newQualifier("Docket")
	cases := map[string]string{
		`select * from docket_runs r join docket_claim_partitions p using (scope_key)`: `select * from "Docket".docket_runs r join "Docket".docket_claim_partitions p using (scope_key)`,
		`select * from docket_tenant_fair_claim($1, $2)`:                               `select * from "Docket".docket_tenant_fair_claim($1, $2)`,
		`select * from app.docket_runs`:                                                `select * from app.docket_runs`,
		`select to_regclass('docket_runs')`:                                            `select to_regclass('docket_runs')`,
		`select 'docket_runs_due_' || md5(current_schema())`:                           `select 'docket_runs_due_' || md5(current_schema())`,
		`update docket_runs set x = 1 where docket_runs.id = 2`:                        `update "Docket".docket_runs set x = 1 where "Docket".docket_runs.id = 2`,
	}
	for in, want := range cases {
		if got := q.qualify(in); got != want {
			t.Errorf("qualify(%q)\n got %q\nwant %q", in, got, want)
		}
		if again := q.qualify(in); again != want {
			t.Errorf("cached qualify(%q) = %q", in, again)
		}
	}
}

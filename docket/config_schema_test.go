package docket

import (
	"testing"
)

func TestQualifyNamesMarkedRelationsOnly(t *testing.T) {
	q := newQualifier("Docket")
	cases := map[string]string{
		`select * from /*schema*/docket_runs r join /*schema*/docket_claim_partitions p using (scope_key)`: `select * from "Docket".docket_runs r join "Docket".docket_claim_partitions p using (scope_key)`,
		`select * from /*schema*/docket_tenant_fair_claim($1, $2)`:                                         `select * from "Docket".docket_tenant_fair_claim($1, $2)`,
		`select * from app.docket_runs`:                                                                    `select * from app.docket_runs`,
		`select to_regclass('docket_runs')`:                                                                `select to_regclass('docket_runs')`,
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

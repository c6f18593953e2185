package sqlschema

import (
	"testing"
)

func TestSchemaQualifiesMarkedRelationsOnly(t *testing.T) {
	q := NewSchema("Docket")
	cases := map[string]string{
		`select * from /*schema*/docket_runs r join /*schema*/docket_claim_partitions p using (scope_key)`: `select * from "Docket".docket_runs r join "Docket".docket_claim_partitions p using (scope_key)`,
		`select * from /*schema*/docket_tenant_fair_claim($1, $2)`:                                         `select * from "Docket".docket_tenant_fair_claim($1, $2)`,
		`select * from app.docket_runs`:                                                                    `select * from app.docket_runs`,
		`select to_regclass('docket_runs')`:                                                                `select to_regclass('docket_runs')`,
	}
	for in, want := range cases {
		if got := q.Qualify(in); got != want {
			t.Errorf("Qualify(%q)\n got %q\nwant %q", in, got, want)
		}
		if again := q.Qualify(in); again != want {
			t.Errorf("cached Qualify(%q) = %q", in, again)
		}
	}
}

package sqlschema

import (
	"slices"
	"testing"
)

func TestQualifyReplacesEveryMarker(t *testing.T) {
	in := `select * from /*schema*/docket_runs r join /*schema*/docket_claim_partitions p using (scope_key)`
	want := `select * from "Docket".docket_runs r join "Docket".docket_claim_partitions p using (scope_key)`
	if got := Qualify(in, "Docket"); got != want {
		t.Fatalf("Qualify\n got %q\nwant %q", got, want)
	}
	if got := Qualify(`select 1`, "docket"); got != `select 1` {
		t.Fatalf("Qualify without markers = %q", got)
	}
}

func TestCreatedFindsRelationsTypesAndFunctions(t *testing.T) {
	sql := `create table docket_runs (id bigint);
CREATE OR REPLACE FUNCTION docket_claim(a int) returns int language sql as $$ select 1 $$;
create type docket_pending as (x int);
create table if not exists docket_ledger (v text);
create index docket_runs_idx on docket_runs (id);
create trigger docket_runs_trg after insert on docket_runs for each row execute function docket_claim();
create function docket_claim(a int, b int) returns int language sql as $$ select 1 $$;`
	want := []string{"docket_claim", "docket_ledger", "docket_pending", "docket_runs"}
	if got := Created(sql); !slices.Equal(got, want) {
		t.Fatalf("Created = %q, want %q", got, want)
	}
}

func TestUnmarkedReportsEveryBareReference(t *testing.T) {
	names := []string{"docket_runs", "docket_claim"}
	cases := map[string][]string{
		`select * from /*schema*/docket_runs where /*schema*/docket_runs.id = 1`: nil,
		`select * from docket_runs r join /*schema*/docket_runs s using (id)`:    {"docket_runs"},
		`-- reads docket_runs
select to_regclass('docket_runs'), "docket_runs", 'it''s docket_runs'`: nil,
		`select * from app.docket_runs, /* docket_runs */ /*schema*/docket_claim(1)`: nil,
		`select r.docket_runs from DOCKET_RUNS r, docket_claim(2)`:                   {"DOCKET_RUNS", "docket_claim"},
		`select docket_runs_list from x`:                                             nil,
	}
	for sql, want := range cases {
		if got := Unmarked(sql, names); !slices.Equal(got, want) {
			t.Errorf("Unmarked(%q) = %q, want %q", sql, got, want)
		}
	}
}

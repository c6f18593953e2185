package db

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// Every source names the function its file is named after, quotes its body
// once, and the newest migration installs one version of each function.
func TestInstalledFunctionsMatchTheirSources(t *testing.T) {
	functions, err := InstalledFunctions()
	if err != nil {
		t.Fatal(err)
	}
	if len(functions) == 0 {
		t.Fatal("the migrations install no function")
	}
	seen := map[string]bool{}
	for _, fn := range functions {
		if seen[fn.Name] {
			t.Errorf("%s is listed twice", fn.Name)
		}
		seen[fn.Name] = true
		if !strings.HasPrefix(fn.File, fn.Name+"_v") {
			t.Errorf("%s comes from %s, a file named after another function", fn.Name, fn.File)
		}
		if len(fn.BodyMD5) != 32 {
			t.Errorf("%s: body md5 %q", fn.Name, fn.BodyMD5)
		}
	}
	sources, err := fs.ReadDir(Functions, FunctionsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, source := range sources {
		name := source.Name()
		if source.IsDir() {
			name += ".sql"
		}
		if _, err := readFunction(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDollarQuotedBodyNeedsExactlyOnePair(t *testing.T) {
	body, err := dollarQuotedBody([]byte("create function f() as $$ select 1 $$;"))
	if err != nil || string(body) != " select 1 " {
		t.Fatalf("body %q, %v", body, err)
	}
	if _, err := dollarQuotedBody([]byte("as $$ a $$ b $$ c $$")); err == nil {
		t.Fatal("two quoted bodies were accepted")
	}
}

// An up section's drops and includes apply in line order, so a drop before
// a new version (a changed signature) keeps the function and a drop after
// its last include removes it; the down section is not read.
func TestUpFunctionStepsKeepLineOrder(t *testing.T) {
	migration := []byte(`-- migrate:up
drop function f(integer);
-- include f_v2.sql
-- end include
drop function if exists g(docket_runs);
-- migrate:down
drop function f(text);
-- include g_v1.sql
-- end include
`)
	got := upFunctionSteps(migration)
	want := []functionStep{{dropped: "f"}, {included: "f_v2.sql"}, {dropped: "g"}}
	if !slices.Equal(got, want) {
		t.Fatalf("steps %+v, want %+v", got, want)
	}
}

// A function an up section dropped after its last include is not listed.
func TestInstalledFunctionsLeaveOutDroppedFunctions(t *testing.T) {
	functions, err := InstalledFunctions()
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range functions {
		if fn.Name == "docket_run_marked" {
			t.Fatalf("docket_run_marked, dropped by schema V22, is listed from %s", fn.File)
		}
	}
}

package lifecycle

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestRunStoreInsertRejectsBadInput(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "taken")
	valid := func() docket.NewRun {
		return docket.NewRun{Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}
	}
	cases := []struct {
		name   string
		mutate func(*docket.NewRun)
		want   error
	}{
		{"tenantless under required tenancy", func(r *docket.NewRun) { r.Scope = docket.Tenantless }, docket.ErrTenantRequired},
		{"empty tenant id", func(r *docket.NewRun) { r.Scope = docket.Tenant("") }, docket.ErrInvalidArgument},
		{"tenant id over 200 bytes", func(r *docket.NewRun) { r.Scope = docket.Tenant(strings.Repeat("t", 201)) }, docket.ErrInvalidArgument},
		{"tenant id with a control character", func(r *docket.NewRun) { r.Scope = docket.Tenant("ac\nme") }, docket.ErrInvalidArgument},
		{"tenant id with invalid UTF-8", func(r *docket.NewRun) { r.Scope = docket.Tenant("ac\xffme") }, docket.ErrInvalidArgument},
		{"run id with a control character", func(r *docket.NewRun) { r.RunID = "r\x001" }, docket.ErrInvalidArgument},
		{"empty graph id", func(r *docket.NewRun) { r.GraphID = "" }, docket.ErrInvalidArgument},
		{"empty graph hash", func(r *docket.NewRun) { r.GraphHash = "" }, docket.ErrInvalidArgument},
		{"missing state", func(r *docket.NewRun) { r.State = nil }, docket.ErrInvalidArgument},
		{"invalid JSON state", func(r *docket.NewRun) { r.State = json.RawMessage(`{"a":`) }, docket.ErrInvalidArgument},
		{"state with U+0000", func(r *docket.NewRun) { r.State = json.RawMessage(`{"a":"x\u0000y"}`) }, docket.ErrInvalidArgument},
		{"state over the size limit", func(r *docket.NewRun) {
			r.State = json.RawMessage(`"` + strings.Repeat("x", docket.MaxStateBytes-1) + `"`)
		}, docket.ErrInvalidArgument},
		{"duplicate run id", func(r *docket.NewRun) { r.RunID = "taken" }, docket.ErrDuplicateRun},
	}
	counts := s.TableCounts()
	for _, tc := range cases {
		run := valid()
		tc.mutate(&run)
		_, err := s.Client.InsertRun(testkit.Context(t), run)
		testkit.ExpectErrorIs(t, tc.name, err, tc.want)
		if got := s.TableCounts(); got != counts {
			t.Fatalf("%s wrote rows: counts %v, want %v", tc.name, got, counts)
		}
		_, err = s.Client.InsertRuns(testkit.Context(t), []docket.NewRun{valid(), run})
		testkit.ExpectErrorIs(t, tc.name+" in a batch", err, tc.want)
		if got := s.TableCounts(); got != counts {
			t.Fatalf("%s in a batch wrote rows: counts %v, want %v", tc.name, got, counts)
		}
	}

	// The limits themselves are accepted.
	run := valid()
	run.Scope = docket.Tenant(strings.Repeat("t", docket.MaxIdentifierBytes))
	run.State = json.RawMessage(`"` + strings.Repeat("x", docket.MaxStateBytes-2) + `"`)
	if _, err := s.Client.InsertRun(testkit.Context(t), run); err != nil {
		t.Fatalf("insert at the limits: %v", err)
	}
	// A doubled backslash before u0000 is ordinary text, not U+0000.
	run = valid()
	run.State = json.RawMessage(`{"a":"\\u0000"}`)
	if _, err := s.Client.InsertRun(testkit.Context(t), run); err != nil {
		t.Fatalf("insert with an escaped backslash: %v", err)
	}
}

func TestRunStoreInsertRunsBatch(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	later := s.DbNow().Add(time.Hour)
	runs := []docket.NewRun{
		{RunID: "a1", Scope: docket.Tenant("a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
		{Scope: docket.Tenant("b"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`), WakeAt: later},
		{RunID: "a2", Scope: docket.Tenant("a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{"k":[1]}`)},
	}
	ids, err := s.Client.InsertRuns(testkit.Context(t), runs)
	if err != nil {
		t.Fatalf("insert runs: %v", err)
	}
	if len(ids) != 3 || ids[0] != "a1" || ids[2] != "a2" || ids[1] == "" {
		t.Fatalf("ids: %v", ids)
	}
	a1, a2, b := s.Row("a1"), s.Row("a2"), s.Row(ids[1])
	if a1.Unfinished != 2 || b.Unfinished != 1 {
		t.Fatalf("unfinished counts: a %d, b %d", a1.Unfinished, b.Unfinished)
	}
	expectSameTime(t, "explicit wake", b.WakeAt, later)
	expectSameTime(t, "zero wake is now", a1.WakeAt, a1.UpdatedAt)
	// Equal wake times keep input order in the FIFO (internal id order).
	if n := testkit.QueryInt64(t, s.Pool, `select count(*) from docket_runs x, docket_runs y where x.run_id = 'a1' and y.run_id = 'a2' and x.id < y.id`); n != 1 {
		t.Fatal("a1 does not precede a2")
	}
	if a2.Status != "running" || a2.AdmittedAt != nil || a2.Token != nil {
		t.Fatalf("a2: %+v", a2)
	}
	counts := s.TableCounts()
	_, err = s.Client.InsertRuns(testkit.Context(t), []docket.NewRun{
		{RunID: "c1", Scope: docket.Tenant("c"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
		{RunID: "a1", Scope: docket.Tenant("a"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)},
	})
	testkit.ExpectErrorIs(t, "batch with a duplicate", err, docket.ErrDuplicateRun)
	if got := s.TableCounts(); got != counts {
		t.Fatalf("failed batch wrote rows: %v, want %v", got, counts)
	}
}

func TestRunStoreListRuns(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	for i := range 5 {
		graph := "even"
		if i%2 == 1 {
			graph = "odd"
		}
		if _, err := s.Client.InsertRun(testkit.Context(t), docket.NewRun{
			RunID: fmt.Sprintf("r%d", i), Scope: docket.Tenant("acme"), GraphID: graph, GraphHash: "h", State: json.RawMessage(`{}`),
		}); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	// Distinct start times make the order independent of run ids.
	testkit.ExecSQL(t, s.Pool, `update docket_runs set started_at = timestamptz '2030-01-01' + (substr(run_id, 2)::int * interval '1 minute')`)
	lease := s.Claim("acme", "r0")
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatalf("finish r0: %v", err)
	}

	var got []string
	req := docket.ListRunsRequest{Scope: docket.Tenant("acme"), Limit: 2}
	for pages := 0; ; pages++ {
		page, err := s.Client.ListRuns(testkit.Context(t), req)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, r := range page.Runs {
			got = append(got, r.RunID)
		}
		if page.Next == nil {
			if pages != 2 {
				t.Fatalf("want 3 pages, got %d", pages+1)
			}
			break
		}
		req.After = page.Next
	}
	if strings.Join(got, ",") != "r4,r3,r2,r1,r0" {
		t.Fatalf("newest first: %v", got)
	}

	for _, tc := range []struct {
		req  docket.ListRunsRequest
		want string
	}{
		{docket.ListRunsRequest{Scope: docket.Tenant("acme"), GraphID: "odd"}, "r3,r1"},
		{docket.ListRunsRequest{Scope: docket.Tenant("acme"), Status: docket.StatusDone}, "r0"},
		{docket.ListRunsRequest{Scope: docket.Tenant("acme"), GraphID: "even", Status: docket.StatusRunning}, "r4,r2"},
		{docket.ListRunsRequest{Scope: docket.Tenant("acme"), Limit: 2, After: &docket.RunCursor{StartedAt: time.Date(2030, 1, 1, 0, 2, 0, 0, time.UTC), RunID: "r2"}}, "r1,r0"},
	} {
		page, err := s.Client.ListRuns(testkit.Context(t), tc.req)
		if err != nil {
			t.Fatalf("list %+v: %v", tc.req, err)
		}
		var ids []string
		for _, r := range page.Runs {
			ids = append(ids, r.RunID)
		}
		if strings.Join(ids, ",") != tc.want || page.Next != nil {
			t.Fatalf("list %+v: got %v next %v, want %s", tc.req, ids, page.Next, tc.want)
		}
	}

	for _, bad := range []docket.ListRunsRequest{
		{Scope: docket.Tenant("acme"), Limit: -1},
		{Scope: docket.Tenant("acme"), Limit: docket.MaxListLimit + 1},
		{Scope: docket.Tenant("acme"), Status: "paused"},
	} {
		_, err := s.Client.ListRuns(testkit.Context(t), bad)
		testkit.ExpectErrorIs(t, fmt.Sprintf("list %+v", bad), err, docket.ErrInvalidArgument)
	}
}

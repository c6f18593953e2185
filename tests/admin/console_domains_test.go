package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// One all-domains console serves every domain (queue) of its database: "/"
// lists them, each domain's pages carry the picker and show that domain
// alone, a write reaches only its domain, and a schema that is not a domain
// is a 404.
func TestConsoleServesEveryDomainOfItsDatabase(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.PoolFor(t, pgtest.NewEmptyDatabase(t))
	testkit.ExecSQL(t, pool, `create schema app`)
	clients := map[string]*docket.Client{}
	for _, schema := range []string{"email", "reports"} {
		if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: schema}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := testkit.TenantFairConfig(2)
		cfg.Schema = schema
		clients[schema] = testkit.OpenClient(t, pool, cfg)
		if _, err := clients[schema].InsertRun(ctx, docket.NewRun{RunID: schema + "-run", Scope: docket.Tenant("acme"),
			GraphID: "send-" + schema, GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := console.New(ctx, console.Config{Pool: pool, Schema: "email", AllDomains: true}); !errors.Is(err, console.ErrInvalidConfig) {
		t.Fatalf("console.New with AllDomains and Schema = %v, want ErrInvalidConfig", err)
	}
	h, err := console.New(ctx, console.Config{Pool: pool, Prefix: consolePrefix, AllDomains: true, AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(consolePrefix+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := newConsoleClient(t, srv)

	index := c.get("/").expect(t, "the domain list", http.StatusOK)
	// The queues page: each domain's runs by phase, in the runs page's tab
	// order, then all of them; each run was inserted queued.
	testkit.ExpectRows(t, "domain list", testkit.ConsoleTable(t, index.body, "domain-list"),
		"email | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1", "reports | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1")
	if !strings.Contains(index.body, `<a href="`+consolePrefix+`/domains/email/runs?phase=queued">1</a>`) {
		t.Fatalf("the queues page does not link email's queued runs:\n%s", index.body)
	}
	if got := testkit.ConsoleFacts(t, index.body, "domains"); got != "Domain:" {
		t.Fatalf("the list page's picker starts %q", got)
	}

	for schema, other := range map[string]string{"email": "reports", "reports": "email"} {
		page := c.get("/domains/"+schema+"/runs").expect(t, schema+"'s runs", http.StatusOK)
		rows := testkit.ConsoleTable(t, page.body, "runs")
		// The first cell is the bulk form's checkbox, which has no text.
		if len(rows) != 1 || !strings.HasPrefix(rows[0], " | "+schema+"-run | acme | send-"+schema+" | running | queued") {
			t.Fatalf("%s's runs page shows %q", schema, rows)
		}
		if !strings.Contains(page.body, `<a href="`+consolePrefix+`/domains/`+schema+`/" aria-current="page">`+schema+`</a>`) ||
			!strings.Contains(page.body, `<a href="`+consolePrefix+`/domains/`+other+`/">`+other+`</a>`) {
			t.Fatalf("%s's runs page lacks the picker with %s current and a link to %s:\n%s", schema, schema, other, page.body)
		}
		if got := consoleLink(page.body, "nav-queues"); got != consolePrefix+"/" {
			t.Fatalf("%s's runs page links the queues page as %q", schema, got)
		}
		if !strings.Contains(page.body, `href="`+consolePrefix+`/domains/`+schema+`/runs/acme/`+schema+`-run"`) {
			t.Fatalf("%s's run link does not stay in its domain:\n%s", schema, page.body)
		}
	}

	// A cap override set on reports' console changes reports alone.
	tenant := c.get("/domains/reports/tenants/acme").expect(t, "reports' tenant page", http.StatusOK)
	version := testkit.ConsoleFacts(t, tenant.body, "partition-version")
	c.post("/domains/reports/tenants/acme/cap", url.Values{"csrf_token": {consoleCSRF(t, tenant.body)}, "op": {"set"},
		"cap": {"5"}, "expected_version": {version}}).expect(t, "reports' cap edit", http.StatusSeeOther)
	for schema, want := range map[string]int{"email": 2, "reports": 5} {
		cp, err := clients[schema].InspectClaimPolicy(ctx, docket.Tenant("acme"))
		if err != nil || cp.EffectiveMaxActiveRuns != want {
			t.Fatalf("%s's acme after the edit: %+v, %v; want cap %d", schema, cp, err, want)
		}
	}

	if r := c.get("/domains/email"); r.status != http.StatusMovedPermanently || r.location != consolePrefix+"/domains/email/" {
		t.Fatalf("a domain without its slash: %d to %q", r.status, r.location)
	}
	for _, schema := range []string{"app", "nothing"} {
		r := c.get("/domains/"+schema+"/").expect(t, "schema "+schema, http.StatusNotFound)
		if got, want := testkit.ConsoleFacts(t, r.body, "error"), `No Docket domain named "`+schema+`" in this database.`; got != want {
			t.Fatalf("schema %s: %q, want %q", schema, got, want)
		}
	}
}

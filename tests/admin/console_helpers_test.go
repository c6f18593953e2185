package admin

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// consolePrefix is where the tests mount the console.
const consolePrefix = "/ops/docket"

// consoleXSS is a tenant id that must reach every page escaped. It sorts
// last under C and under linguistic collations alike.
const consoleXSS = "zz<script>alert(1)</script>"

// consoleSeed builds the small domain the console tests read, under
// TenantFair at default cap 2 (tenant mode none, so the tenantless scope
// exists). Ring positions follow first insertion: acme 1, beta 2,
// tenantless 3, the XSS tenant 4, calm 5, zeta 6; the cursor stands at 2.
//
//	acme: a1, a2 queued; a3 waiting; ap poisoned     unfinished 4, queued 2
//	beta: override cap 1; b1 claimed and b2 ready,   admitted 2, debt 1,
//	      both admitted; b3 done; epoch 5            unfinished 2
//	tenantless: n1 failed                            empty
//	calm: c1 due tomorrow, parked until 2031         unfinished 1
//	zeta: a partition without runs                   empty
//	XSS tenant: x1 queued                            unfinished 1, queued 1
//
// Runs start one minute apart from 2026-01-01T00:01Z in the order a1, a2,
// a3, b1, b2, b3, n1, x1, c1, ap.
func consoleSeed(t testing.TB) consoleDomain {
	t.Helper()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	// Times are SQL expressions, "" meaning null; ids and documents are
	// parameters.
	due := "now() - interval '1 minute'"
	type row struct {
		id, tenant, graph, status                        string
		minute                                           int
		wake, token, claimed, admitted, finished, poison string
	}
	rows := []row{
		{id: "a1", tenant: "acme", graph: "send", status: "running", minute: 1, wake: due},
		{id: "a2", tenant: "acme", graph: "send", status: "running", minute: 2, wake: due},
		{id: "a3", tenant: "acme", graph: "bill", status: "waiting", minute: 3},
		{id: "b1", tenant: "beta", graph: "send", status: "running", minute: 4, token: "gen_random_uuid()", claimed: "now()", admitted: "'2026-01-01T01:00:00Z'"},
		{id: "b2", tenant: "beta", graph: "bill", status: "running", minute: 5, wake: due, admitted: "'2026-01-01T02:00:00Z'"},
		{id: "b3", tenant: "beta", graph: "send", status: "done", minute: 6, finished: "now()"},
		{id: "n1", graph: "send", status: "failed", minute: 7, finished: "now()"},
		{id: "x1", tenant: consoleXSS, graph: "send", status: "running", minute: 8, wake: due},
		{id: "c1", tenant: "calm", graph: "send", status: "running", minute: 9, wake: "now() + interval '1 day'"},
		{id: "ap", tenant: "acme", graph: "send", status: "running", minute: 10, poison: "now()"},
	}
	orNull := func(expr string) string {
		if expr == "" {
			return "null"
		}
		return expr
	}
	for _, r := range rows {
		reason, attempts := "null", 0
		if r.poison != "" {
			reason, attempts = "'max_claim_attempts_exceeded'", 5
		}
		stmt := fmt.Sprintf(`insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, started_at,
			wake_at, claim_token, claimed_at, tenant_admitted_at, finished_at, poisoned_at, poison_reason, claim_attempts)
			values ($1, $2, $3, 'h1', $4, $5, '2026-01-01T00:00:00Z'::timestamptz + $6 * interval '1 minute',
			%s, %s, %s, %s, %s, %s, %s, $7)`,
			orNull(r.wake), orNull(r.token), orNull(r.claimed), orNull(r.admitted), orNull(r.finished), orNull(r.poison), reason)
		var tenant any
		if r.tenant != "" {
			tenant = r.tenant
		}
		testkit.ExecSQL(t, pool, stmt, r.id, tenant, r.graph, `{"run": "`+r.id+`", "n": [1, 2]}`, r.status, r.minute, attempts)
	}
	testkit.ExecSQL(t, pool, `insert into docket_claim_partitions (scope_key) values ('zeta')`)
	if _, err := client.PutClaimPolicyOverride(testkit.Context(t), docket.Tenant("beta"), 1, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("override: %v", err)
	}
	testkit.ExecSQL(t, pool, `update docket_claim_partitions set admission_epoch = 5 where scope_key = 'beta'`)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = '2031-01-02T03:04:05Z' where scope_key = 'calm'`)
	testkit.ExecSQL(t, pool, `update docket_claim_policy set scan_ring_position = 2`)
	// Every write, b1's claim, the two finishes and the poison fall 10 s into the minute
	// five minutes ago, which stays inside the 15-minute window however the
	// clock moves during the test.
	var minute time.Time
	if err := pool.QueryRow(testkit.Context(t), `select date_trunc('minute', now()) - interval '5 minutes'`).Scan(&minute); err != nil {
		t.Fatal(err)
	}
	at := minute.Add(10 * time.Second)
	testkit.ExecSQL(t, pool, `update docket_runs set updated_at = $1::timestamptz,
		claimed_at = case when claimed_at is null then null else $1::timestamptz end,
		finished_at = case when finished_at is null then null else $1::timestamptz end,
		poisoned_at = case when poisoned_at is null then null else $1::timestamptz end`, at)
	return consoleDomain{pool: pool, minute: minute, at: at}
}

// consoleDomain is the seeded domain and its activity minute.
type consoleDomain struct {
	pool *pgxpool.Pool
	// minute starts the minute of every seeded write; at is 10 s into it.
	minute, at time.Time
}

// consoleTime formats t as the pages do.
func consoleTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// consoleServer mounts a console on pool under consolePrefix in an app mux,
// wrapped by wrap when it is non-nil, and returns the server.
func consoleServer(t testing.TB, pool *pgxpool.Pool, writes bool, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	h, err := console.New(testkit.Context(t), console.Config{Pool: pool, Prefix: consolePrefix, AllowWrites: writes})
	if err != nil {
		t.Fatalf("console.New: %v", err)
	}
	var handler http.Handler = h
	if wrap != nil {
		handler = wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle(consolePrefix+"/", handler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// consoleAllDomainsServer mounts an all-domains console with writes on
// pool's database under consolePrefix and returns the server.
func consoleAllDomainsServer(t testing.TB, pool *pgxpool.Pool) *httptest.Server {
	t.Helper()
	h, err := console.New(testkit.Context(t), console.Config{Pool: pool, Prefix: consolePrefix, AllDomains: true, AllowWrites: true})
	if err != nil {
		t.Fatalf("console.New: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(consolePrefix+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// consoleClient is a browser-like client: it keeps cookies and does not
// follow redirects, so tests see the 303 after a write.
type consoleClient struct {
	t   testing.TB
	srv *httptest.Server
	c   *http.Client
}

func newConsoleClient(t testing.TB, srv *httptest.Server) *consoleClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &consoleClient{t: t, srv: srv, c: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// consoleResponse is a fetched page.
type consoleResponse struct {
	status   int
	body     string
	location string
}

// get fetches path (under the prefix).
func (c *consoleClient) get(path string) consoleResponse {
	c.t.Helper()
	return c.do(http.MethodGet, path, nil)
}

// post submits form to path (under the prefix).
func (c *consoleClient) post(path string, form url.Values) consoleResponse {
	c.t.Helper()
	return c.do(http.MethodPost, path, form)
}

func (c *consoleClient) do(method, path string, form url.Values) consoleResponse {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.srv.URL+consolePrefix+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return consoleResponse{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location")}
}

// expect fails the test unless r has status.
func (r consoleResponse) expect(t testing.TB, what string, status int) consoleResponse {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d; body:\n%s", what, r.status, status, r.body)
	}
	return r
}

// consoleCSRF reads the CSRF token of the page's first form.
func consoleCSRF(t testing.TB, body string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf_token" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in:\n%s", body)
	}
	return m[1]
}

// consoleLink returns the unescaped href of the element with id, or "".
func consoleLink(body, id string) string {
	m := regexp.MustCompile(`href="([^"]*)" id="` + regexp.QuoteMeta(id) + `"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// getURL fetches a path that already carries the prefix, as links do.
func (c *consoleClient) getURL(path string) consoleResponse {
	c.t.Helper()
	return c.do(http.MethodGet, strings.TrimPrefix(path, consolePrefix), nil)
}

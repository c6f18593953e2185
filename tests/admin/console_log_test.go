package admin

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docketrun/docket-go/console"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// syncBuffer is a log sink the server's goroutines share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Refused and failed requests are logged by route, status and class, never
// with a tenant id, a run id or an error text that holds one.
func TestConsoleLogsNoIdentities(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	consoleSchedules(t, d)
	var logs syncBuffer
	h, err := console.New(testkit.Context(t), console.Config{Pool: d.pool, Prefix: consolePrefix, AllowWrites: true,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(consolePrefix+"/", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := newConsoleClient(t, srv)
	token := consoleCSRF(t, c.get("/tenants/acme").body)
	c.get("/runs/secret-tenant/secret-run").expect(t, "missing run", http.StatusNotFound)
	c.post("/tenants/acme/cap", url.Values{"csrf_token": {token}, "expected_version": {"42"}, "op": {"set"}, "cap": {"3"}}).expect(t, "stale", http.StatusConflict)
	c.post("/runs/beta/b3/cancel", url.Values{"csrf_token": {token}, "confirm": {"yes"}}).expect(t, "refused", http.StatusUnprocessableEntity)
	c.post("/schedules/acme/nightly/pause", url.Values{"csrf_token": {token}, "expected_version": {"42"}}).expect(t, "stale schedule", http.StatusConflict)
	c.post("/runs/beta/b1/cancel", url.Values{}).expect(t, "csrf", http.StatusForbidden)
	c.get("/tenants?after_t=secret-cursor&after_v=x").expect(t, "bad cursor", http.StatusBadRequest)
	out := logs.String()
	for _, want := range []string{"route=run status=404 class=not_found", "route=cap status=409 class=stale",
		"route=run_action status=422 class=invalid_transition", "route=schedule_action status=409 class=stale", "route=write status=403 class=csrf", "route=tenants status=400 class=invalid"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, id := range []string{"secret", "acme", "beta", "b1", "b3", "nightly"} {
		if strings.Contains(out, id) {
			t.Errorf("log holds %q:\n%s", id, out)
		}
	}
}

// New refuses a config it cannot serve, before touching the database.
func TestConsoleNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	admin, err := docket.NewAdmin(testkit.Context(t), d.pool, docket.AdminConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]console.Config{
		"neither":            {},
		"both":               {Pool: d.pool, Admin: admin},
		"schema with admin":  {Admin: admin, Schema: "docket"},
		"relative prefix":    {Pool: d.pool, Prefix: "ops"},
		"trailing slash":     {Pool: d.pool, Prefix: "/ops/"},
		"pattern characters": {Pool: d.pool, Prefix: "/ops/{x}"},
	} {
		if _, err := console.New(testkit.Context(t), cfg); !errors.Is(err, console.ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := console.New(testkit.Context(t), console.Config{Pool: d.pool, Schema: "nowhere"}); !errors.Is(err, docket.ErrSchemaMismatch) {
		t.Errorf("a schema without Docket: %v", err)
	}
	h, err := console.New(testkit.Context(t), console.Config{Admin: admin})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tenants", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="/tenants/acme"`) {
		t.Errorf("a console at the root on an Admin: %d\n%s", rec.Code, rec.Body.String())
	}
}

// An app that imports the console links what importing docket links, and
// nothing of the browser test's dependencies.
func TestConsoleLinksOnlyWhatDocketLinks(t *testing.T) {
	t.Parallel()
	list := func(pkg string) []string {
		out, err := exec.CommandContext(testkit.Context(t), "go", "list", "-deps",
			"-f", "{{if not .Standard}}{{with .Module}}{{.Path}}{{end}}{{end}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		modules := strings.Fields(string(out))
		slices.Sort(modules)
		return slices.Compact(modules)
	}
	if got, want := list("github.com/docketrun/docket-go/console"), list("github.com/docketrun/docket-go/docket"); !slices.Equal(got, want) {
		t.Fatalf("importing console links\n%v\nimporting docket links\n%v", got, want)
	}
}

package console

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// ErrInvalidConfig reports a Config that New refuses; nothing was started.
var ErrInvalidConfig = errors.New("console: invalid config")

// Config configures New.
type Config struct {
	// Pool is the pool of the domain's database. Exactly one of Pool and
	// Admin is set.
	Pool *pgxpool.Pool
	// Admin is an administration facade the application already has; the
	// console uses it as it is (its schema and tenant mode apply).
	Admin *docket.Admin
	// Schema names the domain's schema, as docket.Config.Schema does; only
	// with Pool.
	Schema string
	// AllDomains serves every Docket domain (queue) of Pool's database, only
	// with Pool and without Schema: "/" lists the domains, each domain's
	// pages are served under "/domains/{schema}/", and every page carries a
	// domain picker.
	AllDomains bool
	// Prefix is the path the application mounts the handler under, such as
	// "/ops/docket": it starts with "/" and does not end with one; "" mounts
	// it at the root. Every link the console renders starts with it.
	Prefix string
	// AllowWrites enables cap edits and run actions. False (the default)
	// renders no form and refuses every POST with 403.
	AllowWrites bool
	// Logger receives failed requests by route and error class, never with
	// tenant or run ids; nil discards.
	Logger *slog.Logger
}

// Handler is the console's http.Handler.
type Handler struct {
	admin *docket.Admin
	// domains is the all-domains console's set of domain consoles, which
	// each of them shares too; nil for a console of one domain.
	domains *domainSet
	// domain is the schema of a domain console of an all-domains console.
	domain      string
	prefix      string
	allowWrites bool
	logger      *slog.Logger
	csrf        csrfKey
	pages       pageSet
	// static holds the style sheet and the script.
	static fs.FS
	// root serves the console's routes with the prefix stripped.
	root http.Handler
}

var _ http.Handler = (*Handler)(nil)

// New validates cfg, verifies the domain's schema (through docket.NewAdmin
// when cfg.Pool is set) and returns the handler. It writes nothing.
func New(ctx context.Context, cfg Config) (*Handler, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if !cfg.AllDomains {
		return newHandler(ctx, cfg, nil)
	}
	if _, err := docket.ListDomains(ctx, cfg.Pool); err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	set := &domainSet{cfg: cfg, open: map[string]*Handler{}}
	if _, err := rand.Read(set.csrf[:]); err != nil {
		return nil, fmt.Errorf("console: csrf secret: %w", err)
	}
	h, err := newCommon(cfg, set)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(h.static)))
	mux.HandleFunc("GET /{$}", h.queuesPage)
	mux.HandleFunc("GET /", h.notFound)
	h.root = http.StripPrefix(cfg.Prefix, mux)
	return h, nil
}

// newHandler returns the console of one domain; set is the all-domains
// console it belongs to, or nil.
func newHandler(ctx context.Context, cfg Config, set *domainSet) (*Handler, error) {
	admin := cfg.Admin
	if admin == nil {
		var err error
		admin, err = docket.NewAdmin(ctx, cfg.Pool, docket.AdminConfig{TenantMode: docket.TenantNone, Schema: cfg.Schema})
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
	}
	h, err := newCommon(cfg, set)
	if err != nil {
		return nil, err
	}
	h.admin = admin
	if set == nil {
		if _, err := rand.Read(h.csrf[:]); err != nil {
			return nil, fmt.Errorf("console: csrf secret: %w", err)
		}
	}
	h.root = http.StripPrefix(cfg.Prefix, h.routes(h.static))
	return h, nil
}

// newCommon returns a handler with what every console has: its templates,
// assets, logger and, in an all-domains console, the set's CSRF secret.
func newCommon(cfg Config, set *domainSet) (*Handler, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pages, err := parsePages(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	static, err := staticFS()
	if err != nil {
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	h := &Handler{domains: set, prefix: cfg.Prefix, allowWrites: cfg.AllowWrites, logger: logger, pages: pages, static: static}
	if set != nil {
		h.csrf = set.csrf
	}
	return h, nil
}

func (c Config) validate() error {
	switch {
	case (c.Pool == nil) == (c.Admin == nil):
		return fmt.Errorf("%w: set exactly one of Pool and Admin", ErrInvalidConfig)
	case c.Admin != nil && c.Schema != "":
		return fmt.Errorf("%w: Schema applies to Pool only; the Admin has its own", ErrInvalidConfig)
	case c.AllDomains && (c.Pool == nil || c.Schema != ""):
		return fmt.Errorf("%w: AllDomains serves every domain of Pool's database: set Pool and no Schema", ErrInvalidConfig)
	case c.Prefix != "" && (!strings.HasPrefix(c.Prefix, "/") || strings.HasSuffix(c.Prefix, "/")):
		return fmt.Errorf("%w: prefix %q must start with / and not end with one", ErrInvalidConfig, c.Prefix)
	case strings.ContainsAny(c.Prefix, "?#{}"):
		return fmt.Errorf("%w: prefix %q holds a character a path prefix cannot", ErrInvalidConfig, c.Prefix)
	}
	return nil
}

// ServeHTTP serves the console's pages under the prefix; anything else is
// 404.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == h.prefix && h.prefix != "" {
		http.Redirect(w, r, h.prefix+"/", http.StatusMovedPermanently)
		return
	}
	if h.domains != nil && h.domain == "" && strings.HasPrefix(r.URL.Path, h.prefix+domainsPath) {
		h.serveDomain(w, r)
		return
	}
	h.root.ServeHTTP(w, r)
}

// routes registers every page and action. The tenantless scope has its own
// paths, since it has no tenant id to put in one.
func (h *Handler) routes(static fs.FS) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", h.domainPage)
	mux.HandleFunc("GET /fragment/domain", h.domainFragment)
	mux.HandleFunc("POST /domain/pause", h.write(h.domainPauseAction))
	mux.HandleFunc("GET /tenants", h.tenantsPage)
	mux.HandleFunc("GET /tenants/{tenant}", h.withScope(h.tenantPage))
	mux.HandleFunc("GET /tenantless", h.tenantless(h.tenantPage))
	mux.HandleFunc("POST /tenants/{tenant}/cap", h.write(h.withScope(h.capAction)))
	mux.HandleFunc("POST /tenantless/cap", h.write(h.tenantless(h.capAction)))
	mux.HandleFunc("POST /tenants/{tenant}/pause", h.write(h.withScope(h.pauseAction)))
	mux.HandleFunc("POST /tenantless/pause", h.write(h.tenantless(h.pauseAction)))
	mux.HandleFunc("GET /schedules", h.schedulesPage)
	mux.HandleFunc("GET /schedules/{tenant}/{name}/remove", h.withScope(h.scheduleRemovePage))
	mux.HandleFunc("GET /tenantless/schedules/{name}/remove", h.tenantless(h.scheduleRemovePage))
	mux.HandleFunc("POST /schedules/{tenant}/{name}/{action}", h.write(h.withScope(h.scheduleAction)))
	mux.HandleFunc("POST /tenantless/schedules/{name}/{action}", h.write(h.tenantless(h.scheduleAction)))
	mux.HandleFunc("GET /ring", h.ringPage)
	mux.HandleFunc("GET /runs", h.runsPage)
	mux.HandleFunc("POST /runs/bulk", h.write(h.bulkConfirm))
	mux.HandleFunc("POST /runs/bulk/apply", h.write(h.bulkApply))
	mux.HandleFunc("GET /runs/{tenant}/{run}", h.withScope(h.runPage))
	mux.HandleFunc("GET /tenantless/runs/{run}", h.tenantless(h.runPage))
	mux.HandleFunc("GET /runs/{tenant}/{run}/cancel", h.withScope(h.cancelPage))
	mux.HandleFunc("GET /tenantless/runs/{run}/cancel", h.tenantless(h.cancelPage))
	mux.HandleFunc("POST /runs/{tenant}/{run}/{action}", h.write(h.withScope(h.runAction)))
	mux.HandleFunc("POST /tenantless/runs/{run}/{action}", h.write(h.tenantless(h.runAction)))
	mux.HandleFunc("GET /", h.notFound)
	return mux
}

// scopedHandler serves a page or action of one scope.
type scopedHandler func(w http.ResponseWriter, r *http.Request, scope docket.Scope)

// withScope reads the scope from the {tenant} path segment.
func (h *Handler) withScope(next scopedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		next(w, r, docket.Tenant(r.PathValue("tenant")))
	}
}

// tenantless serves next for the tenantless scope.
func (h *Handler) tenantless(next scopedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		next(w, r, docket.Tenantless)
	}
}

// write guards an action: refused with 403 on a read-only console and on a
// missing or wrong CSRF token, before the form is read any further.
func (h *Handler) write(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.allowWrites {
			h.fail(w, r, "write", failure{status: http.StatusForbidden, class: "read_only", message: "This console is read-only: writes are disabled."})
			return
		}
		if !h.csrf.verify(r) {
			h.fail(w, r, "write", failure{status: http.StatusForbidden, class: "csrf", message: "The form's CSRF token is missing or wrong: reload the page and try again. Nothing was changed."})
			return
		}
		next(w, r)
	}
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, "not_found", failure{status: http.StatusNotFound, class: "not_found", message: "No such page."})
}

package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/docketrun/docket-go/docket"
)

// domainsPath is where an all-domains console serves each domain's pages:
// {Prefix}/domains/{schema}/...
const domainsPath = "/domains/"

// domainSet is an all-domains console's view of its database: the domain
// consoles it has opened, each a Handler of its own under domainsPath that
// shares the set's configuration and CSRF secret.
type domainSet struct {
	cfg  Config
	csrf csrfKey
	mu   sync.Mutex
	open map[string]*Handler
}

// picker is the domain picker every page of an all-domains console shows.
type picker struct {
	// Domains are the database's domains, sorted.
	Domains []string
	// Current is the domain of the page; "" on the domain list.
	Current string
	// Base is the path the domain names follow.
	Base string
	// Root is the queues page, the all-domains console's "/".
	Root string
}

// link is the path of domain's console.
func (p *picker) Link(domain string) string {
	return p.Base + url.PathEscape(domain) + "/"
}

// serveDomain serves a request under domainsPath with the console of the
// domain its first segment names, opened at its first request. A schema
// that holds no domain at the binary's version is 404 and opens nothing.
func (h *Handler) serveDomain(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, h.prefix+domainsPath)
	name, _, _ := strings.Cut(rest, "/")
	schema, err := url.PathUnescape(name)
	if err != nil || schema == "" {
		h.notFound(w, r)
		return
	}
	if rest == name {
		http.Redirect(w, r, h.prefix+domainsPath+name+"/", http.StatusMovedPermanently)
		return
	}
	domain, err := h.domains.handler(r, schema)
	switch {
	case errors.Is(err, docket.ErrNotFound):
		h.fail(w, r, "domain", failure{status: http.StatusNotFound, class: "not_found",
			message: fmt.Sprintf("No Docket domain named %q in this database.", schema)})
		return
	case errors.Is(err, docket.ErrSchemaMismatch):
		h.fail(w, r, "domain", failure{status: http.StatusConflict, class: "schema_mismatch", message: err.Error()})
		return
	case err != nil:
		h.failErr(w, r, "domain", err)
		return
	}
	domain.ServeHTTP(w, r)
}

// handler returns the console of schema, opening it when it is one of the
// database's domains.
func (s *domainSet) handler(r *http.Request, schema string) (*Handler, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.open[schema]; ok {
		return h, nil
	}
	domains, err := docket.ListDomains(r.Context(), s.cfg.Pool)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(domains, schema) {
		return nil, fmt.Errorf("%w: domain %q", docket.ErrNotFound, schema)
	}
	cfg := s.cfg
	cfg.AllDomains = false
	cfg.Schema = schema
	cfg.Prefix = s.cfg.Prefix + domainsPath + url.PathEscape(schema)
	h, err := newHandler(r.Context(), cfg, s)
	if err != nil {
		return nil, err
	}
	h.domain = schema
	s.open[schema] = h
	return h, nil
}

// picker lists the database's domains for a page of domain ("" for the
// list itself).
func (s *domainSet) picker(r *http.Request, domain string) (*picker, error) {
	domains, err := docket.ListDomains(r.Context(), s.cfg.Pool)
	if err != nil {
		return nil, err
	}
	return &picker{Domains: domains, Current: domain, Base: s.cfg.Prefix + domainsPath, Root: s.cfg.Prefix + "/"}, nil
}

package console

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// staticFS holds the style sheet and the script.
func staticFS() (fs.FS, error) {
	return fs.Sub(assets, "assets/static")
}

// pageNames are the page templates; each is parsed with the layout.
var pageNames = []string{"queues", "domain", "tenants", "tenant", "ring", "runs", "run", "bulk", "schedules", "schedule-remove", "cancel", "error"}

// pageSet maps a page name to its parsed template.
type pageSet map[string]*template.Template

// parsePages parses every page with the layout and the link helpers of prefix.
func parsePages(prefix string) (pageSet, error) {
	set := make(pageSet, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(templateFuncs(prefix)).
			ParseFS(assets, "assets/templates/layout.html", "assets/templates/runtable.html", "assets/templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		set[name] = t
	}
	return set, nil
}

// view is what every page template receives.
type view struct {
	// Title names the page in the title bar and heading.
	Title string
	// Nav is the highlighted navigation entry.
	Nav string
	// CSRF is the token for the page's forms; "" on a read-only console.
	CSRF string
	// Writes reports whether forms are offered.
	Writes bool
	// Error and Notice are messages shown above the page's content.
	Error  string
	Notice string
	// Data is the page's own content.
	Data any
	// Picker lists the database's domains on an all-domains console; nil
	// on a console of one domain.
	Picker *picker
}

// render executes page into a buffer and writes it with status, so a
// template failure never sends half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	if h.allowWrites {
		v.CSRF = h.csrfToken(w, r)
		v.Writes = true
	}
	if h.domains != nil {
		p, err := h.domains.picker(r, h.domain)
		if err != nil {
			// The page still renders, without the picker.
			f := errorStatus(err)
			h.logger.WarnContext(r.Context(), "console: listing domains failed", "class", f.class, "sqlstate", f.sqlstate)
		}
		v.Picker = p
	}
	h.writeTemplate(w, r, status, page, "layout", v)
}

// writeTemplate executes one named template of page and writes it.
func (h *Handler) writeTemplate(w http.ResponseWriter, r *http.Request, status int, page, name string, data any) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, name, data); err != nil {
		h.logger.ErrorContext(r.Context(), "console: template failed", "page", page, "error", err)
		http.Error(w, "console: internal error", http.StatusInternalServerError)
		return
	}
	header := w.Header()
	header.Set("Content-Type", "text/html; charset=utf-8")
	header.Set("Cache-Control", "no-store")
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("Referrer-Policy", "same-origin")
	header.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

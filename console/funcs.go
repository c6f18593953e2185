package console

import (
	"html/template"
	"net/url"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// templateFuncs are the helpers the templates call; every link starts with
// prefix and escapes the ids it carries.
func templateFuncs(prefix string) template.FuncMap {
	return template.FuncMap{
		"url":       func(path string) string { return prefix + path },
		"tenantURL": func(s docket.Scope) string { return prefix + scopePath(s) },
		"runURL":    func(s docket.Scope, runID string) string { return prefix + runPath(s, runID) },
		"scopeName": scopeName,
		"time":      formatTime,
		"age":       formatAge,
		"inc":       func(n int) int { return n + 1 },
	}
}

// scopePath is the tenant page path of s.
func scopePath(s docket.Scope) string {
	if id, ok := s.TenantID(); ok {
		return "/tenants/" + url.PathEscape(id)
	}
	return "/tenantless"
}

// runPath is the run page path of a run of s.
func runPath(s docket.Scope, runID string) string {
	if id, ok := s.TenantID(); ok {
		return "/runs/" + url.PathEscape(id) + "/" + url.PathEscape(runID)
	}
	return "/tenantless/runs/" + url.PathEscape(runID)
}

// scopeName is how a page names s.
func scopeName(s docket.Scope) string {
	if id, ok := s.TenantID(); ok {
		return id
	}
	return "(tenantless)"
}

// formatTime renders a time, or a dash for none, in UTC to the second.
func formatTime(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return "—"
		}
		t = *x
	default:
		return "—"
	}
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// formatAge renders a duration to the whole second, as "1h2m5s".
func formatAge(d time.Duration) string {
	return d.Truncate(time.Second).String()
}

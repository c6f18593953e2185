package console

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Without a database: a config without Pool or Admin is refused, every page
// template parses, and a CSRF token fits only its own nonce and secret.
func TestConfigTemplatesAndCSRF(t *testing.T) {
	if _, err := New(context.Background(), Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("empty config: %v", err)
	}
	pages, err := parsePages("/p")
	if err != nil {
		t.Fatalf("templates: %v", err)
	}
	if len(pages) != len(pageNames) {
		t.Fatalf("%d pages parsed, want %d", len(pages), len(pageNames))
	}
	h := &Handler{prefix: "/p", csrf: csrfKey{1}}
	rec := httptest.NewRecorder()
	token := h.csrfToken(rec, httptest.NewRequest(http.MethodGet, "/p/", nil))
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != csrfCookie || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/p/" {
		t.Fatalf("cookie %+v", cookies)
	}
	post := func(key csrfKey, nonce, token string) bool {
		r := httptest.NewRequest(http.MethodPost, "/p/x", strings.NewReader(url.Values{csrfField: {token}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: nonce})
		return key.verify(r)
	}
	nonce := cookies[0].Value
	if !post(h.csrf, nonce, token) {
		t.Errorf("the token of the nonce is refused")
	}
	if post(csrfKey{2}, nonce, token) {
		t.Errorf("another secret accepts the token")
	}
	if post(h.csrf, strings.Repeat("0", 32), token) {
		t.Errorf("another nonce accepts the token")
	}
	if post(h.csrf, "short", h.csrf.tokenFor("short")) {
		t.Errorf("a malformed nonce is accepted")
	}
}

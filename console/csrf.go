package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// csrfCookie names the cookie holding the browser's CSRF nonce.
const csrfCookie = "docket_console_csrf"

// csrfField names the hidden form field holding the CSRF token.
const csrfField = "csrf_token"

// csrfKey is the handler's random secret. A form's token is the HMAC of the
// browser's nonce cookie under it: a page of another origin can neither read
// the nonce (SameSite=Strict, HttpOnly) nor compute the token without the
// secret, and a token never fits another handler or browser.
type csrfKey [32]byte

// tokenFor returns the token of nonce.
func (k csrfKey) tokenFor(nonce string) string {
	mac := hmac.New(sha256.New, k[:])
	mac.Write([]byte(nonce))
	return hex.EncodeToString(mac.Sum(nil))
}

// verify reports whether r carries a nonce cookie and the token that fits it.
func (k csrfKey) verify(r *http.Request) bool {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !validNonce(c.Value) {
		return false
	}
	got := r.PostFormValue(csrfField)
	return hmac.Equal([]byte(got), []byte(k.tokenFor(c.Value)))
}

// validNonce reports a nonce of the shape csrfToken issues.
func validNonce(v string) bool {
	b, err := hex.DecodeString(v)
	return err == nil && len(b) == 16
}

// csrfToken returns the token for r's nonce, issuing a nonce cookie first
// when r has none.
func (h *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && validNonce(c.Value) {
		return h.csrf.tokenFor(c.Value)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (it aborts the program instead)
	nonce := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name:     csrfCookie,
		Value:    nonce,
		Path:     h.prefix + "/",
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
	return h.csrf.tokenFor(nonce)
}

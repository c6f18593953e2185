package console

import (
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
)

// fail logs a refused or failed request by route, status and error class
// (never with ids) and renders message on the error page with status.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, route string, status int, class, message string) {
	h.logger.WarnContext(r.Context(), "console: request refused", "route", route, "status", status, "class", class)
	h.render(w, r, status, "error", view{Title: http.StatusText(status), Error: message})
}

// errorStatus maps a facade error to its status, an identity-free class for
// the log and the message the page shows.
func errorStatus(err error) (status int, class, message string) {
	switch {
	case errors.Is(err, docket.ErrStale):
		return http.StatusConflict, "stale", err.Error()
	case errors.Is(err, docket.ErrNotFound):
		return http.StatusNotFound, "not_found", err.Error()
	case errors.Is(err, docket.ErrInvalidTransition):
		return http.StatusUnprocessableEntity, "invalid_transition", err.Error()
	case errors.Is(err, docket.ErrNotInitialized):
		return http.StatusConflict, "not_initialized", err.Error() + " (start an engine with TenantFair once, or set an override)"
	case errors.Is(err, docket.ErrInvalidCap), errors.Is(err, docket.ErrInvalidArgument),
		errors.Is(err, docket.ErrTenantRequired), errors.Is(err, errBadInput):
		return http.StatusBadRequest, "invalid", err.Error()
	}
	return http.StatusInternalServerError, errorClass(err), "The database call failed; the server log has its error class."
}

// errorClass is the identity-free class of an unexpected error for the log:
// its SQLSTATE when the database raised it.
func errorClass(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return "sqlstate_" + pgErr.Code
	}
	return "error"
}

// failErr renders err on the error page.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, route string, err error) {
	status, class, message := errorStatus(err)
	h.fail(w, r, route, status, class, message)
}

// errBadInput reports a form or query value the console cannot parse.
var errBadInput = errors.New("console: bad input")

package console

import (
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
)

// failure is a refused or failed request: its status, an identity-free
// class for the log, the SQLSTATE of a failed database call ("" for any
// other failure) and the message the page shows.
type failure struct {
	status   int
	class    string
	sqlstate string
	message  string
}

// logRefused logs f by route, status, class and SQLSTATE: never with ids or
// an error text, which can hold them.
func (h *Handler) logRefused(r *http.Request, route string, f failure) {
	attrs := []any{"route", route, "status", f.status, "class", f.class}
	if f.sqlstate != "" {
		attrs = append(attrs, "sqlstate", f.sqlstate)
	}
	h.logger.WarnContext(r.Context(), "console: request refused", attrs...)
}

// fail logs a refused or failed request and renders its message on the
// error page with its status.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, route string, f failure) {
	h.logRefused(r, route, f)
	h.render(w, r, f.status, "error", view{Title: http.StatusText(f.status), Error: f.message})
}

// errorStatus maps a facade error to its failure. A failed database call
// is classed by its SQLSTATE's class (the first two characters: 42 for a
// syntax error or access rule violation, 08 for a connection exception);
// a failure without a SQLSTATE is classed "error".
func errorStatus(err error) failure {
	var transition *docket.TransitionError
	switch {
	case errors.Is(err, docket.ErrStale):
		return failure{status: http.StatusConflict, class: "stale", message: err.Error()}
	case errors.Is(err, docket.ErrNotFound):
		return failure{status: http.StatusNotFound, class: "not_found", message: err.Error()}
	case errors.As(err, &transition):
		return failure{status: http.StatusUnprocessableEntity, class: "invalid_transition", message: transition.Explain(actionName)}
	case errors.Is(err, docket.ErrInvalidTransition):
		return failure{status: http.StatusUnprocessableEntity, class: "invalid_transition", message: err.Error()}
	case errors.Is(err, docket.ErrNotInitialized):
		return failure{status: http.StatusConflict, class: "not_initialized",
			message: err.Error() + " (start an engine with TenantFair once, or set an override)"}
	case errors.Is(err, docket.ErrInvalidCap), errors.Is(err, docket.ErrInvalidArgument),
		errors.Is(err, docket.ErrTenantRequired), errors.Is(err, errBadInput):
		return failure{status: http.StatusBadRequest, class: "invalid", message: err.Error()}
	}
	f := failure{status: http.StatusInternalServerError, class: "error",
		message: "The database call failed; the server log has its error class."}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && len(pgErr.Code) == 5 {
		f.class, f.sqlstate = pgErr.Code[:2], pgErr.Code
	}
	return f
}

// failErr renders err on the error page.
func (h *Handler) failErr(w http.ResponseWriter, r *http.Request, route string, err error) {
	h.fail(w, r, route, errorStatus(err))
}

// errBadInput reports a form or query value the console cannot parse.
var errBadInput = errors.New("console: bad input")

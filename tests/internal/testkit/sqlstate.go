package testkit

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATEs of the claim faults.
const (
	// AdminShutdown is 57P01: the backend was ended by pg_terminate_backend.
	AdminShutdown = "57P01"
	// QueryCanceled is 57014: statement_timeout (or a cancel request) ended the statement.
	QueryCanceled = "57014"
)

// GuardSQLState returns the SQLSTATE of err, or "" when it has none.
func GuardSQLState(err error) string {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code
	}
	return ""
}

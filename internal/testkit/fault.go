package testkit

// SQLSTATEs of the claim faults.
const (
	// AdminShutdown is 57P01: the backend was ended by pg_terminate_backend.
	AdminShutdown = "57P01"
	// QueryCanceled is 57014: statement_timeout (or a cancel request) ended the statement.
	QueryCanceled = "57014"
)

package docket

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// validateState checks a run document: valid UTF-8 JSON of at most
// MaxStateBytes that PostgreSQL's jsonb will store. Checking here rather than
// relying on the database keeps a caller's transaction usable after a bad
// document.
func validateState(state json.RawMessage) error {
	switch {
	case len(state) == 0:
		return invalidArgument("state is empty; use a JSON value such as {}")
	case len(state) > MaxStateBytes:
		return invalidArgument("state is %d bytes, over the %d-byte limit", len(state), MaxStateBytes)
	case !utf8.Valid(state):
		return invalidArgument("state is not valid UTF-8")
	case !json.Valid(state):
		return invalidArgument("state is not valid JSON")
	case holdsNUL(state):
		return invalidArgument("state contains the character U+0000, which jsonb cannot store")
	}
	return nil
}

// holdsNUL reports whether a valid JSON document decodes to a string or key
// containing U+0000. Only documents with the escape sequence need decoding.
func holdsNUL(state json.RawMessage) bool {
	if !bytes.Contains(state, []byte(`\u0000`)) {
		return false
	}
	// UseNumber: a number beyond float64 is still valid JSON and jsonb.
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	return anyHoldsNUL(v)
}

func anyHoldsNUL(v any) bool {
	switch t := v.(type) {
	case string:
		return strings.ContainsRune(t, 0)
	case []any:
		for _, e := range t {
			if anyHoldsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if strings.ContainsRune(k, 0) || anyHoldsNUL(e) {
				return true
			}
		}
	}
	return false
}

// requireRunID refuses, before any database access, a run id no run can
// have: the database holds every run id to the identifier rules
// (validateIdentifier), so reads and lifecycle writes accept exactly what an
// insert accepts.
func requireRunID(runID string) error {
	return validateIdentifier("run id", runID)
}

// requireStorable refuses text a PostgreSQL text value cannot hold (invalid
// UTF-8 or U+0000), which would otherwise fail in the database with an
// untyped encoding error.
func requireStorable(field, v string) error {
	switch {
	case !utf8.ValidString(v):
		return invalidArgument("%s is not valid UTF-8", field)
	case strings.ContainsRune(v, 0):
		return invalidArgument("%s contains the character U+0000", field)
	}
	return nil
}

// The range of PostgreSQL's timestamptz: from 4714-11-24 00:00:00 UTC BC
// (4713 BC in the Julian calendar, Julian day 0) up to, not including,
// 294277-01-01 00:00:00 UTC. Go numbers years astronomically, so 4714 BC is
// year -4713. pgx sends a time.Time truncated to the microsecond, rounding
// towards the past in both its binary and its text encoding, so exactly the
// times in [minStorableTime, endStorableTime) arrive inside the range: the
// latest one, 294276-12-31 23:59:59.999999999, arrives as
// 23:59:59.999999. Its binary encoding counts microseconds since 2000 in an
// int64 that wraps around past about 292,000 years from 2000, and the int64
// extremes mean infinity: inside the range the count is exact and never
// reaches them, so every time the encoding would send wrapped or as
// infinity lies outside the range and is refused too.
var (
	minStorableTime = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC)
	endStorableTime = time.Date(294277, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// requireStorableTime refuses, before any database access, a time that
// PostgreSQL's timestamptz cannot hold, which would otherwise fail in the
// database with an untyped "timestamp out of range" error (or, past the
// int64 range of pgx's encoding, arrive as some other time).
func requireStorableTime(field string, t time.Time) error {
	if t.Before(minStorableTime) || !t.Before(endStorableTime) {
		return invalidArgument("%s %s is outside the range PostgreSQL's timestamptz holds (4714-11-24 BC to 294276-12-31 AD, UTC)",
			field, t.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// MaxIdentifierBytes is the largest tenant id, run id, graph id, graph hash
// or unique key the run store accepts, in bytes of UTF-8.
const MaxIdentifierBytes = 200

// identifierChecks maps each named check of docket_runs that holds an
// identifier to the rules of validateIdentifier (schema V3) to the field the
// facade's own refusal names, so a writer that bypassed the facade meets the
// same typed error (a test holds this map equal to the schema's checks).
var identifierChecks = map[string]string{
	"docket_runs_run_id_check":     "run id",
	"docket_runs_tenant_id_check":  "tenant id",
	"docket_runs_graph_id_check":   "graph id",
	"docket_runs_graph_hash_check": "graph hash",
	"docket_runs_unique_key_check": "unique key",
}

// uniqueCheck is the check of docket_runs that holds a unique run's covered
// statuses to run statuses including running, the status of every insert.
const uniqueCheck = "docket_runs_unique_check"

// maxAttemptsCheck is the check of docket_runs that holds a run's own max
// attempts to at least 1, the rule NewRun.MaxAttempts is validated by.
const maxAttemptsCheck = "docket_runs_max_attempts_check"

// tenantRequiredCheck is the constraint name the trigger
// docket_runs_require_tenant reports when a tenantless run meets a domain of
// required tenancy.
const tenantRequiredCheck = "docket_runs_tenant_required_check"

// Scope names the owner of runs: one tenant, or the tenantless owner. Every
// run store read and write takes a scope and the database enforces it, so a
// run of another scope reads as ErrNotFound. The zero value is Tenantless.
type Scope struct {
	tenantID string
	isTenant bool
}

// Tenantless is the scope of runs without a tenant. It is one ordinary
// partition, not a wildcard, and is refused under TenantRequired.
var Tenantless = Scope{}

// Tenant returns the scope of tenant id. The id is validated where the scope
// is used: inserting runs and the claim-policy calls need it non-empty, at
// most MaxIdentifierBytes, valid UTF-8 and free of control characters; reads
// and lifecycle writes of existing runs only need non-empty valid UTF-8
// without U+0000, so runs inserted with plain SQL stay addressable.
func Tenant(id string) Scope { return Scope{tenantID: id, isTenant: true} }

// TenantID returns the tenant id and true, or "" and false for Tenantless.
func (s Scope) TenantID() (string, bool) { return s.tenantID, s.isTenant }

// String returns "tenantless" or "tenant:<id>".
func (s Scope) String() string {
	if !s.isTenant {
		return "tenantless"
	}
	return "tenant:" + s.tenantID
}

// scopeOf maps a stored tenant_id column back to its scope.
func scopeOf(tenantID *string) Scope {
	if tenantID == nil {
		return Tenantless
	}
	return Tenant(*tenantID)
}

// scopeKey validates s under the client's tenant mode and returns its
// partition key: the tenant id, or "" for the tenantless owner.
func (c *store) scopeKey(s Scope) (string, error) {
	if !s.isTenant {
		if c.tenantMode == TenantRequired {
			return "", fmt.Errorf("%w: the tenantless scope is refused under required tenancy", ErrTenantRequired)
		}
		return "", nil
	}
	if err := validateIdentifier("tenant id", s.tenantID); err != nil {
		return "", err
	}
	return s.tenantID, nil
}

// tenantColumn is the tenant_id value of a validated scope: NULL when tenantless.
func (s Scope) tenantColumn() *string {
	if !s.isTenant {
		return nil
	}
	id := s.tenantID
	return &id
}

// validateIdentifier enforces the shared rules of tenant, run and graph
// identifiers, which the named checks of docket_runs (identifierChecks)
// state for every other writer: a character other than a space, at most
// MaxIdentifierBytes bytes, valid UTF-8, no control character (U+0000 to
// U+001F, U+007F to U+009F). Control characters are refused because
// identifiers end up in logs and operator tooling, where they could forge
// or hide lines.
func validateIdentifier(field, v string) error {
	switch {
	case v == "":
		return invalidArgument("%s is empty", field)
	case strings.Trim(v, " ") == "":
		return invalidArgument("%s is blank", field)
	case len(v) > MaxIdentifierBytes:
		return invalidArgument("%s is %d bytes, over the %d-byte limit", field, len(v), MaxIdentifierBytes)
	case !utf8.ValidString(v):
		return invalidArgument("%s is not valid UTF-8", field)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return invalidArgument("%s contains the control character %U", field, r)
		}
	}
	return nil
}

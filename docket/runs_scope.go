package docket

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxIdentifierBytes is the largest tenant id, run id, graph id or graph hash
// the run store accepts, in bytes of UTF-8.
const MaxIdentifierBytes = 200

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

// runScopeKey validates s for addressing existing runs and returns its
// partition key. The tenantless scope is refused under required tenancy and
// a tenant id must be non-empty text PostgreSQL can hold, but the creation
// rules of validateIdentifier do not apply: a run inserted with plain SQL
// under a longer tenant id, or one with a control character, is leased by
// ClaimDue with that scope, and its holder must be able to commit it.
func (c *store) runScopeKey(s Scope) (string, error) {
	if !s.isTenant {
		return c.scopeKey(s)
	}
	if s.tenantID == "" {
		return "", invalidArgument("tenant id is empty")
	}
	if err := requireStorable("tenant id", s.tenantID); err != nil {
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
// identifiers. Control characters are refused because identifiers end up in
// logs and operator tooling, where they could forge or hide lines.
func validateIdentifier(field, v string) error {
	switch {
	case v == "":
		return invalidArgument("%s is empty", field)
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

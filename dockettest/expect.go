package dockettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/docketrun/docket-go/docket"
)

// Expect describes an inserted run. Scope and one of RunID and GraphID name
// it; every other field set is compared, and a zero field is not.
type Expect struct {
	// Scope is the run's owner: docket.Tenant(id), or docket.Tenantless (the
	// zero value).
	Scope docket.Scope
	// RunID names one run. Empty means any run of GraphID in Scope.
	RunID string
	// GraphID is compared when set; without RunID it selects the runs of
	// Scope that are compared.
	GraphID string
	// GraphHash is compared when set.
	GraphHash string
	// Status is compared when set.
	Status docket.RunStatus
	// Step is compared when not nil (see Step).
	Step *int
	// State is compared as JSON values when not nil: spacing, key order
	// and number spelling do not matter.
	State json.RawMessage
	// Schema is the schema Docket's tables live in, for a pool or a
	// transaction whose search_path does not reach them. Empty means the
	// client's Config.Schema, or the search_path for a pool or transaction.
	Schema string
}

// Step returns a pointer to n, for Expect.Step.
func Step(n int) *int { return &n }

// describe names the expectation in messages.
func (e Expect) describe() string {
	if e.RunID != "" {
		return fmt.Sprintf("run %q (%s)", e.RunID, e.Scope)
	}
	return fmt.Sprintf("a run of graph %q (%s)", e.GraphID, e.Scope)
}

// check refuses an expectation that names no run or carries a State that
// is not JSON.
func (e Expect) check() error {
	if e.RunID == "" && e.GraphID == "" {
		return fmt.Errorf("an expectation needs a RunID or a GraphID")
	}
	if e.State != nil && !json.Valid(e.State) {
		return fmt.Errorf("the expected State of %s is not JSON: %s", e.describe(), e.State)
	}
	return nil
}

// diff lists how run differs from e, one line per field; none when it
// matches.
func (e Expect) diff(run docket.Run) []string {
	var out []string
	field := func(name string, got, want any) {
		out = append(out, fmt.Sprintf("%s: got %v, want %v", name, got, want))
	}
	if run.Scope != e.Scope {
		field("scope", run.Scope, e.Scope)
	}
	if e.RunID != "" && run.RunID != e.RunID {
		field("run id", fmt.Sprintf("%q", run.RunID), fmt.Sprintf("%q", e.RunID))
	}
	if e.GraphID != "" && run.GraphID != e.GraphID {
		field("graph id", fmt.Sprintf("%q", run.GraphID), fmt.Sprintf("%q", e.GraphID))
	}
	if e.GraphHash != "" && run.GraphHash != e.GraphHash {
		field("graph hash", fmt.Sprintf("%q", run.GraphHash), fmt.Sprintf("%q", e.GraphHash))
	}
	if e.Status != "" && run.Status != e.Status {
		field("status", run.Status, e.Status)
	}
	if e.Step != nil && run.Step != *e.Step {
		field("step", run.Step, *e.Step)
	}
	if e.State != nil && !sameJSON(run.State, e.State) {
		field("state", compact(run.State), compact(e.State))
	}
	return out
}

// sameJSON reports whether a and b hold equal JSON values.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// compact renders a document on one line.
func compact(doc json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, doc) != nil {
		return string(doc)
	}
	return b.String()
}

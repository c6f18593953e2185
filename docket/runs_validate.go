package docket

import (
	"bytes"
	"encoding/json"
	"strings"
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

// requireRunID refuses, before any database access, a run id that can name
// no stored run: empty, or text PostgreSQL cannot hold. The identifier rules
// apply only when a run is created, so runs inserted with plain SQL stay
// addressable.
func requireRunID(runID string) error {
	if runID == "" {
		return invalidArgument("run id is empty")
	}
	return requireStorable("run id", runID)
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

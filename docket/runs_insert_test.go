package docket

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
)

// The derived unique key is the SHA-256 of the graph id, a zero byte and
// the state as canonical JSON: object keys sorted, no insignificant space,
// numbers and strings as written, so a reordered or respaced document of
// the same value gives the same key and any other graph or value another.
func TestDerivedUniqueKeyIsTheHashOfGraphAndCanonicalState(t *testing.T) {
	canonical := `{"a":1.50,"b":[2,{"c":"\u003cx\u003e","d":null}],"e":1e3}`
	sum := sha256.Sum256([]byte("report\x00" + canonical))
	want := hex.EncodeToString(sum[:])
	for _, state := range []string{
		canonical,
		`{ "e": 1e3, "b": [2, {"d": null, "c": "<x>"}], "a": 1.50 }`,
		"{\n\t\"b\": [2, {\"c\": \"\\u003cx>\", \"d\": null}],\n\t\"a\": 1.50, \"e\": 1e3\n}",
	} {
		got, err := derivedUniqueKey("report", json.RawMessage(state))
		if err != nil || got != want {
			t.Fatalf("derivedUniqueKey(report, %s) = %q, %v; want %q", state, got, err, want)
		}
	}
	for _, other := range []struct{ graph, state string }{
		{"report2", canonical},
		{"report", `{"a":1.5,"b":[2,{"c":"<x>","d":null}],"e":1e3}`},
		{"report", `{"a":1.50,"b":[{"c":"<x>","d":null},2],"e":1e3}`},
	} {
		if got, err := derivedUniqueKey(other.graph, json.RawMessage(other.state)); err != nil || got == want {
			t.Fatalf("derivedUniqueKey(%s, %s) = %q, %v; want another key", other.graph, other.state, got, err)
		}
	}
}

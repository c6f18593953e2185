package docket

import "testing"

// prefixEnd is the least string above every string that starts with the
// prefix: the last rune raised, trailing U+10FFFF dropped first, the
// surrogates skipped, and none for a prefix of U+10FFFF alone.
func TestPrefixEnd(t *testing.T) {
	for prefix, want := range map[string]string{
		"a":                     "b",
		"run-9":                 "run-:",
		"café":                  "cafê",
		"x\U0010FFFF":           "y",
		"x\U0010FFFF\U0010FFFF": "y",
		"\uD7FF":                "\uE000",
		"ab\U0010FFFFc":         "ab\U0010FFFFd",
		"\U0010FFFF\U0010FFFFz": "\U0010FFFF\U0010FFFF{",
	} {
		got, ok := prefixEnd(prefix)
		if !ok || got != want {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q", prefix, got, ok, want)
		}
	}
	for _, prefix := range []string{"", "\U0010FFFF", "\U0010FFFF\U0010FFFF"} {
		if got, ok := prefixEnd(prefix); ok {
			t.Errorf("prefixEnd(%q) = %q, want none", prefix, got)
		}
	}
}

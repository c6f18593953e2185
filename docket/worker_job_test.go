package docket

import (
	"runtime"
	"strings"
	"testing"
)

func TestPanicText(t *testing.T) {
	frame := runtime.Frame{Function: "app.f", File: "/src/app/f.go", Line: 7}
	line := "app.f\n\t/src/app/f.go:7"
	three := []runtime.Frame{frame, frame, frame}
	long := strings.Repeat("v", MaxRunErrorBytes-len(PanicStackSeparator)-len(line)-1)
	cases := []struct {
		name    string
		value   any
		frames  []runtime.Frame
		omitted bool
		want    string
	}{
		{"no frames", "boom", nil, false, "boom"},
		{"all frames", "boom", three, false, "boom" + PanicStackSeparator + line + "\n" + line + "\n" + line},
		{"deeper frames left out", "boom", three, true, "boom" + PanicStackSeparator + line + "\n" + line + "\n" + line + "\n(outer frames omitted)"},
		{"invalid bytes", "a\x00b\xff", three[:1], false, "a\uFFFDb\uFFFD" + PanicStackSeparator + line},
		// One whole frame fits and nothing more, not even the omission.
		{"one frame fits", long, three, false, long + PanicStackSeparator + line},
		{"no frame fits", long + "vv", three, false, long + "vv"},
		{"the value fills the bound", strings.Repeat("é", MaxRunErrorBytes), three, true, strings.Repeat("é", MaxRunErrorBytes/2)},
	}
	for _, c := range cases {
		got := panicText(c.value, c.frames, c.omitted)
		if got != c.want {
			t.Errorf("%s: panicText = %q, want %q", c.name, got[:min(len(got), 200)], c.want[:min(len(c.want), 200)])
		}
		if len(got) > MaxRunErrorBytes {
			t.Errorf("%s: %d bytes", c.name, len(got))
		}
	}
}

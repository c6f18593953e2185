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
	// Two whole frames fit after longer, and one frame with the omission.
	longer := strings.Repeat("v", MaxRunErrorBytes-len(PanicStackSeparator)-2*len(line)-2)
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
		// A stack cut short always says so: the omission line takes the
		// place of the outermost frames it needs, here the only one that fit.
		{"one frame fits, not with the omission", long, three, false, long},
		{"the omission takes a frame's place", longer, three, false, longer + PanicStackSeparator + line + "\n(outer frames omitted)"},
		{"all frames fit, the omission does not", longer, three[:2], true, longer + PanicStackSeparator + line + "\n(outer frames omitted)"},
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

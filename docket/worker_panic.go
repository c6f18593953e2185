package docket

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
)

// The stack part of a panic's error entry.
const (
	// PanicStackFrames is how many frames of the panicking handler's
	// goroutine a panic entry keeps at most, innermost first: the frame
	// that panicked, its caller, and so on up to the handler Docket called.
	PanicStackFrames = 16
	// PanicStackSeparator ends the panic value in a panic entry's text; the
	// frames follow it, one per two lines: the function's name, then a tab
	// and file:line. strings.Cut(text, PanicStackSeparator) splits the
	// value from the frames.
	PanicStackSeparator = "\n\nstack of the panicking goroutine, innermost first:\n"
	// panicStackOmitted is the last line of a stack that kept
	// PanicStackFrames frames of a deeper one.
	panicStackOmitted = "(outer frames omitted)"
)

// invokeFunction is the name runtime frames give Job.invoke, the frame
// that calls the handler and recovers its panic: the stack of a panic
// entry ends right above it. It is set in init, since Job.invoke itself
// reads it.
var invokeFunction string

func init() {
	invokeFunction = runtime.FuncForPC(reflect.ValueOf((*Job).invoke).Pointer()).Name()
}

// panicFrames returns the frames of the handler whose panic is being
// recovered, innermost first: at most PanicStackFrames of them, and whether
// deeper ones were left out. Its caller must be the deferred function that
// recovered the panic, called by the runtime's panic machinery: the frames
// above the runtime's panic frames (that function's and the runtime's) are
// skipped, and the frames from Job.invoke on are Docket's own.
func panicFrames() ([]runtime.Frame, bool) {
	// The recovering function, runtime.gopanic, the runtime's frames of a
	// runtime error, then PanicStackFrames frames and one to tell more.
	var pcs [PanicStackFrames + 32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var out []runtime.Frame
	inPanic, inRuntime := false, true
	for {
		f, more := frames.Next()
		switch {
		case !inPanic:
			inPanic = f.Function == "runtime.gopanic"
		case f.Function == invokeFunction:
			return out, false
		case inRuntime && strings.HasPrefix(f.Function, "runtime."):
			// runtime.panicmem, runtime.sigpanic, runtime.mapassign...: how
			// the runtime raised a runtime error, not where the handler did.
		case len(out) == PanicStackFrames:
			return out, true
		default:
			inRuntime = false
			out = append(out, f)
		}
		if !more {
			// The buffer ended before Job.invoke: frames were left out
			// when it was full.
			return out, n == len(pcs) && len(out) > 0
		}
	}
}

// panicText is the error text of a handler panic with value and the
// handler's frames: the value as fmt.Sprint prints it, then as many whole
// frames as fit in MaxRunErrorBytes. A value that fills the bound by itself
// is cut to it, and the frames are left out.
func panicText(value any, frames []runtime.Frame, omitted bool) string {
	text := storableText(fmt.Sprint(value))
	if len(frames) == 0 || len(text)+len(PanicStackSeparator) >= MaxRunErrorBytes {
		return errorText(text)
	}
	var b strings.Builder
	b.WriteString(text)
	b.WriteString(PanicStackSeparator)
	kept := 0
	for _, f := range frames {
		line := storableText(f.Function + "\n\t" + f.File + ":" + strconv.Itoa(f.Line))
		if kept > 0 {
			line = "\n" + line
		}
		if b.Len()+len(line) > MaxRunErrorBytes {
			break
		}
		b.WriteString(line)
		kept++
	}
	if kept == 0 {
		return errorText(text)
	}
	if (omitted || kept < len(frames)) && b.Len()+1+len(panicStackOmitted) <= MaxRunErrorBytes {
		b.WriteString("\n" + panicStackOmitted)
	}
	return b.String()
}

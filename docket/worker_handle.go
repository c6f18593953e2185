package docket

// This file is the call of a job's handler: the Worker's Handle, the
// handlers it wraps, and what a panic leaves in the run's history.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/docketrun/docket-go/internal/executor"
)

// Handle implements executor.Work: it calls the handler through its
// middleware and plans the commit of its verdict; a handler that returned
// after its timeout passed failed its attempt, whatever it returned. The
// error is the one the handler reported: Fail's or a Retry...Error's own
// (nil for Fail(nil)), the zero Result or the timeout. The logs above debug
// level name only the verdict, never the error text.
func (s *jobSeam) Handle(ctx context.Context) (executor.Plan[commitPlan], error) {
	j, w := s.j, s.j.worker
	result := j.route.handle(ctx, j)
	if timeout, ok := errors.AsType[*HandlerTimeoutError](context.Cause(ctx)); ok {
		plan := timedOut(j.step, j.attempt, j.policy(), timeout)
		w.logger.WarnContext(ctx, "docket worker handler outlived its timeout", "result", plan.checkpointType,
			"timeout", timeout.Timeout)
		return plan.exec(), timeout
	}
	plan := result.plan(j.step, j.attempt, j.policy())
	switch {
	case result.kind == resultMissing:
		w.logger.WarnContext(ctx, "docket worker handler returned the zero Result", "result", plan.checkpointType)
		return plan.exec(), errZeroResult
	case result.err != nil:
		w.debug(ctx, "docket worker handler attempt failed", j.RunID, "result", plan.checkpointType,
			"error", result.err.Error())
		return plan.exec(), result.err
	}
	return plan.exec(), nil
}

// Panicked implements executor.Work: a panic is a failed attempt, whose
// error entry keeps the handler's innermost frames (panicFrames); no log
// or span carries the frames.
func (s *jobSeam) Panicked(ctx context.Context, value any) (executor.Plan[commitPlan], error) {
	j, w := s.j, s.j.worker
	frames, omitted := panicFrames()
	plan := panicked(j.step, j.attempt, j.policy(), panicText(value, frames, omitted))
	w.logger.ErrorContext(ctx, "docket worker handler panicked", "result", plan.checkpointType)
	w.debug(ctx, "docket worker handler panic", j.RunID, "panic", fmt.Sprint(value))
	return plan.exec(), fmt.Errorf("docket: handler panic: %v", value)
}

// typedHandle is the Handler of graphID's registered handler: it decodes
// the state into a T, failing the attempt when it does not decode.
func typedHandle[T any](graphID string, handler TypedHandler[T]) Handler {
	return func(ctx context.Context, job *Job) Result {
		var state T
		if err := json.Unmarshal(job.State, &state); err != nil {
			return Fail(fmt.Errorf("decode the state of graph %s into %v: %w", quoteID(graphID), reflect.TypeFor[T](), err))
		}
		return handler(ctx, job, state)
	}
}

// noHandler is the Handler of a graph without a registered handler.
func noHandler(graphID string) Handler {
	return func(context.Context, *Job) Result {
		return Fail(fmt.Errorf("%w for graph %s", ErrNoHandler, quoteID(graphID)))
	}
}

// errZeroResult is the error a handler span records for the zero Result.
var errZeroResult = errors.New("docket: the handler returned the zero Result")

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

// handleFunction is the name runtime frames give jobSeam.Handle, the frame
// that calls the handler: the stack of a panic entry ends right above it.
// It is set in init, since jobSeam.Panicked reads it.
var handleFunction string

func init() {
	handleFunction = runtime.FuncForPC(reflect.ValueOf((*jobSeam).Handle).Pointer()).Name()
}

// panicFrames returns the frames of the handler whose panic is being
// recovered, innermost first: at most PanicStackFrames of them, and whether
// deeper ones were left out. It must run while the panic is being
// recovered, from the function that recovered it (the executor's) or one it
// calls: the frames up to the runtime's panic frames are skipped, and the
// frames from jobSeam.Handle on are Docket's own.
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
		case f.Function == handleFunction:
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
			// The buffer ended before jobSeam.Handle: frames were left out
			// when it was full.
			return out, n == len(pcs) && len(out) > 0
		}
	}
}

// panicText is the error text of a handler panic with value and the
// handler's frames: the value as fmt.Sprint prints it, then as many whole
// frames as fit in MaxRunErrorBytes, and the omission line when frames were
// left out, which takes the place of as many of the outermost kept frames
// as it needs. A value that fills the bound by itself is cut to it, and the
// frames are left out.
func panicText(value any, frames []runtime.Frame, omitted bool) string {
	text := storableText(fmt.Sprint(value))
	if len(frames) == 0 || len(text)+len(PanicStackSeparator) >= MaxRunErrorBytes {
		return errorText(text)
	}
	size := len(text) + len(PanicStackSeparator)
	var lines []string
	for _, f := range frames {
		line := storableText(f.Function + "\n\t" + f.File + ":" + strconv.Itoa(f.Line))
		if len(lines) > 0 {
			line = "\n" + line
		}
		if size+len(line) > MaxRunErrorBytes {
			break
		}
		lines = append(lines, line)
		size += len(line)
	}
	cut := omitted || len(lines) < len(frames)
	if cut {
		for len(lines) > 0 && size+1+len(panicStackOmitted) > MaxRunErrorBytes {
			size -= len(lines[len(lines)-1])
			lines = lines[:len(lines)-1]
		}
	}
	if len(lines) == 0 {
		return errorText(text)
	}
	var b strings.Builder
	b.Grow(size + 1 + len(panicStackOmitted))
	b.WriteString(text)
	b.WriteString(PanicStackSeparator)
	for _, line := range lines {
		b.WriteString(line)
	}
	if cut {
		b.WriteString("\n" + panicStackOmitted)
	}
	return b.String()
}

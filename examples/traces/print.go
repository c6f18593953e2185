package traces

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// printSpans writes one line per span: the roots in the order they started,
// each followed by its children, indented, and a link named after the span
// it points to.
func printSpans(out io.Writer, spans tracetest.SpanStubs) error {
	names := map[trace.SpanID]string{}
	children := map[trace.SpanID][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		names[s.SpanContext.SpanID()] = s.Name
	}
	for _, s := range spans {
		if _, ok := names[s.Parent.SpanID()]; ok && s.Parent.IsValid() {
			children[s.Parent.SpanID()] = append(children[s.Parent.SpanID()], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var write func(depth int, level []tracetest.SpanStub)
	write = func(depth int, level []tracetest.SpanStub) {
		slices.SortStableFunc(level, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for _, s := range level {
			b.WriteString(strings.Repeat("  ", depth) + s.Name)
			if s.Name == "docket.claim" {
				fmt.Fprintf(&b, ", leased %d", leases(s))
			}
			for _, l := range s.Links {
				b.WriteString(", linked to " + cmp.Or(names[l.SpanContext.SpanID()], "an unrecorded span"))
			}
			b.WriteString("\n")
			write(depth+1, children[s.SpanContext.SpanID()])
		}
	}
	write(0, roots)
	_, err := io.WriteString(out, b.String())
	return err
}

// leases is a docket.claim span's lease count.
func leases(s tracetest.SpanStub) int64 {
	for _, kv := range s.Attributes {
		if kv.Key == "docket.claim.leases" {
			return kv.Value.AsInt64()
		}
	}
	return 0
}

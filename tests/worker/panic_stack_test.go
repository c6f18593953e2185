package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The panic value of explodeInHelper.
const helperPanic = "stack-test: the helper exploded"

// explodeInHelper sends the file:line of its own panic to at, then panics.
func explodeInHelper(at chan<- string) {
	_, file, line, _ := runtime.Caller(0)
	at <- fmt.Sprintf("%s:%d", file, line+2)
	panic(helperPanic)
}

// recurseThenPanic calls itself depth times, then sends the lines of its
// panic and of its call of itself to at and panics.
func recurseThenPanic(depth int, at chan<- [2]int) {
	_, _, line, _ := runtime.Caller(0)
	if depth == 0 {
		at <- [2]int{line + 3, line + 5}
		panic("stack-test: deep down")
	}
	recurseThenPanic(depth-1, at)
}

// A panic's error entry is the panic value followed by the panicking
// handler's innermost frames, function and file:line, without the
// runtime's panic frames or Docket's own; a deep stack keeps at most
// docket.PanicStackFrames frames, and every entry stays within
// docket.MaxRunErrorBytes. No frame reaches a log record at info level or
// above, nor a metric.
func TestWorkerPanicEntryKeepsTheStack(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(4)
	cfg.MeterProvider = provider
	s := &testkit.RunStore{T: t, Pool: pool, Client: testkit.OpenClient(t, pool, cfg)}
	for _, id := range []string{"helper", "deep", "long"} {
		s.Insert("acme", id)
	}
	panicAt := make(chan string, 1)
	handlerAt := make(chan string, 1)
	deepAt := make(chan [2]int, 1)
	events := testkit.NewWorkerEvents()
	log := &testkit.WorkerLogRecorder{}
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 3, OnEvent: events.Hook, Logger: slog.New(log),
		Retry: docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch job.RunID {
			case "helper":
				_, file, line, _ := runtime.Caller(0)
				handlerAt <- fmt.Sprintf("%s:%d", file, line+2)
				explodeInHelper(panicAt)
			case "deep":
				recurseThenPanic(5000, deepAt)
			}
			panic(strings.Repeat("é", docket.MaxRunErrorBytes))
		}})
	events.WaitVerdicts(t, map[string]string{"helper": "panic", "deep": "panic", "long": "panic"})
	testkit.StopWorker(t, w, runResult)

	entry := func(runID string) string {
		t.Helper()
		attempt, entries := testkit.RunErrorStored(t, s.Pool, runID)
		if attempt != 1 || len(entries) != 1 || entries[0].Attempt != 1 || entries[0].Kind != docket.ErrorKindPanic {
			t.Fatalf("%s stores attempt %d, errors %+v; want one panic entry of attempt 1", runID, attempt, entries)
		}
		text := entries[0].Error
		if len(text) > docket.MaxRunErrorBytes || !utf8.ValidString(text) {
			t.Fatalf("%s: the entry's text is %d bytes (valid UTF-8: %v), want at most %d", runID, len(text), utf8.ValidString(text), docket.MaxRunErrorBytes)
		}
		return text
	}

	// The helper's frame, then the handler's, then nothing of Docket's.
	const pkg = "github.com/docketrun/docket-go/tests/worker."
	want := helperPanic + docket.PanicStackSeparator +
		pkg + "explodeInHelper\n\t" + <-panicAt + "\n" +
		pkg + "TestWorkerPanicEntryKeepsTheStack.func2\n\t" + <-handlerAt
	if got := entry("helper"); got != want {
		t.Fatalf("the helper's panic entry is\n%s\nwant\n%s", got, want)
	}

	// A deep stack keeps its innermost frames, as many as the bounds allow.
	value, stack, found := strings.Cut(entry("deep"), docket.PanicStackSeparator)
	if value != "stack-test: deep down" || !found {
		t.Fatalf("the deep panic's entry starts %q (separator found: %v)", value, found)
	}
	lines := strings.Split(stack, "\n")
	if len(lines)%2 != 1 || lines[len(lines)-1] != "(outer frames omitted)" {
		t.Fatalf("the deep panic's stack does not end with the omission: %q", stack)
	}
	frames := (len(lines) - 1) / 2
	deepLines := <-deepAt
	_, file, _, _ := runtime.Caller(0)
	for i := 0; i < frames; i++ {
		line := deepLines[1]
		if i == 0 {
			line = deepLines[0]
		}
		if lines[2*i] != pkg+"recurseThenPanic" || lines[2*i+1] != fmt.Sprintf("\t%s:%d", file, line) {
			t.Fatalf("frame %d of the deep panic is %q %q", i, lines[2*i], lines[2*i+1])
		}
	}
	if frames == 0 || frames > docket.PanicStackFrames {
		t.Fatalf("the deep panic kept %d frames, want 1..%d", frames, docket.PanicStackFrames)
	}
	frameBytes := len(lines[0]) + 1 + len(lines[1]) + 1
	if total := len(entry("deep")); frames != docket.PanicStackFrames && total+frameBytes <= docket.MaxRunErrorBytes {
		t.Fatalf("the deep panic kept %d frames in %d bytes, though one more of %d bytes fits", frames, total, frameBytes)
	}

	// A value that fills the bound by itself is cut on a character
	// boundary, and keeps no frame.
	if got, want := entry("long"), strings.Repeat("é", docket.MaxRunErrorBytes/2); got != want {
		t.Fatalf("the long panic's entry is %d bytes %q..., want %d bytes of é", len(got), got[:min(len(got), 20)], len(want))
	}

	for _, frame := range []string{"explodeInHelper", "recurseThenPanic", "panic_stack_test.go", "goroutine"} {
		expectNoIdentities(t, log, frame)
		for _, v := range testkit.TelemetryCollect(t, testkit.Context(t), reader).Values {
			if strings.Contains(v, frame) {
				t.Errorf("a metric attribute value %q names %q", v, frame)
			}
		}
	}
}

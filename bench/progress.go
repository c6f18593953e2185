package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress prints timestamped progress lines.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	began time.Time
}

// newProgress returns a printer whose clock starts now.
func newProgress(out io.Writer) *progress { return &progress{out: out, began: time.Now()} }

// logf prints one line prefixed with the time since the run began.
func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "[%6.1fs] "+format+"\n", append([]any{time.Since(p.began).Seconds()}, args...)...)
}

// elapsed is the time since the run began.
func (p *progress) elapsed() time.Duration { return time.Since(p.began) }

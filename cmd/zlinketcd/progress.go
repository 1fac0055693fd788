package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Default progress timing: work shorter than a second prints no progress.
const (
	defaultProgressFirst = time.Second
	defaultProgressEvery = 5 * time.Second
)

// progressTiming says when progress lines appear: the first after first,
// then at most one per every, each only when the state changed.
type progressTiming struct {
	first, every time.Duration
}

// withDefaults fills in the default timing.
func (t progressTiming) withDefaults() progressTiming {
	if t.first <= 0 {
		t.first = defaultProgressFirst
	}
	if t.every <= 0 {
		t.every = defaultProgressEvery
	}
	return t
}

// progress prints the latest state of a long piece of work on stderr, so
// that stdout keeps only the results.
type progress struct {
	w       io.Writer
	mu      sync.Mutex
	line    string
	printed string
	stop    chan struct{}
	done    chan struct{}
}

// startProgress starts printing the state that set records.
func (e *env) startProgress() *progress {
	p := &progress{w: e.stderr, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run(e.progress)
	return p
}

// run prints the state when it changed, on the timing's schedule.
func (p *progress) run(t progressTiming) {
	defer close(p.done)
	timer := time.NewTimer(t.first)
	defer timer.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-timer.C:
		}
		p.mu.Lock()
		if p.line != "" && p.line != p.printed {
			fmt.Fprintln(p.w, p.line)
			p.printed = p.line
		}
		p.mu.Unlock()
		timer.Reset(t.every)
	}
}

// set records the current state.
func (p *progress) set(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = fmt.Sprintf(format, args...)
}

// end stops printing. Safe to call more than once.
func (p *progress) end() {
	p.mu.Lock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.mu.Unlock()
	<-p.done
}

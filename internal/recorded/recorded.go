// Package recorded holds Log, the list in which a test's fake records what
// it saw (events, calls, batches) from any goroutine, for the test to take.
package recorded

import (
	"slices"
	"sync"
)

// Log is a list of recorded items, safe for concurrent use. The zero value
// is an empty log ready to use.
type Log[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add records items.
func (l *Log[T]) Add(items ...T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, items...)
}

// Take returns the items recorded since the last Take (nil when none) and
// forgets them.
func (l *Log[T]) Take() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	items := l.items
	l.items = nil
	return items
}

// All returns a copy of the items recorded since the last Take.
func (l *Log[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

package demo

import (
	"context"
	"log/slog"
	"sync/atomic"
)

// quietWhenStopping is a log handler that drops every record once its node
// is being stopped on purpose: the loop's tick in flight then ends with a
// cancelled context, which the reconciler reports as a store failure.
type quietWhenStopping struct {
	inner    slog.Handler
	stopping *atomic.Bool
}

// Enabled implements slog.Handler.
func (q quietWhenStopping) Enabled(ctx context.Context, l slog.Level) bool {
	return !q.stopping.Load() && q.inner.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (q quietWhenStopping) Handle(ctx context.Context, r slog.Record) error {
	if q.stopping.Load() {
		return nil
	}
	return q.inner.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (q quietWhenStopping) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietWhenStopping{inner: q.inner.WithAttrs(attrs), stopping: q.stopping}
}

// WithGroup implements slog.Handler.
func (q quietWhenStopping) WithGroup(name string) slog.Handler {
	return quietWhenStopping{inner: q.inner.WithGroup(name), stopping: q.stopping}
}

package demo

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Defaults of Options.
const (
	DefaultNodes           = 5
	DefaultActors          = 4
	DefaultMesh            = "demo"
	DefaultLeaseTTL        = 10 * time.Second
	DefaultPollingInterval = 200 * time.Millisecond
	DefaultStageTimeout    = 20 * time.Second
	// QuickPollingInterval is the polling interval of a quick run.
	QuickPollingInterval = 50 * time.Millisecond
	// MinNodes and MaxNodes bound Options.Nodes: a crash needs two
	// survivors, and the tables stay readable up to twenty nodes.
	MinNodes = 3
	MaxNodes = 20
	// MaxActors bounds Options.Actors (each node has room for ten).
	MaxActors = 50
)

// actorType is the stable type of the demo's actors.
const actorType = "player"

// Options configure a run. The zero value runs the default demo.
type Options struct {
	// Nodes is the number of simulated nodes (MinNodes..MaxNodes); 0 means
	// DefaultNodes.
	Nodes int
	// Actors is the number of actors created (1..MaxActors); 0 means
	// DefaultActors.
	Actors int
	// Mesh is the mesh name; "" means DefaultMesh.
	Mesh string
	// LeaseTTL is the owner-lease TTL of every node; 0 means
	// DefaultLeaseTTL.
	LeaseTTL time.Duration
	// PollingInterval is the auto-connect polling interval; 0 means
	// DefaultPollingInterval, or QuickPollingInterval with Quick.
	PollingInterval time.Duration
	// StageTimeout bounds the wait for each stage's state; 0 means
	// DefaultStageTimeout.
	StageTimeout time.Duration
	// Quick shortens the timings (for tests).
	Quick bool
	// Keep ends the run without cleaning up: the nodes stop as if they
	// crashed, so their rows stay and their leases run out after LeaseTTL
	// (for inspect and gc to look at).
	Keep bool
	// Out receives the progress and the tables; nil discards them.
	Out io.Writer
	// Logger receives the loops' diagnostics; nil discards them.
	Logger *slog.Logger
}

// resolve applies the defaults and checks the values.
func (o Options) resolve() (Options, error) {
	o.Nodes = cmp.Or(o.Nodes, DefaultNodes)
	o.Actors = cmp.Or(o.Actors, DefaultActors)
	o.Mesh = cmp.Or(o.Mesh, DefaultMesh)
	o.LeaseTTL = cmp.Or(o.LeaseTTL, DefaultLeaseTTL)
	if o.PollingInterval == 0 {
		o.PollingInterval = DefaultPollingInterval
		if o.Quick {
			o.PollingInterval = QuickPollingInterval
		}
	}
	o.StageTimeout = cmp.Or(o.StageTimeout, DefaultStageTimeout)
	o.Out = cmp.Or(o.Out, io.Discard)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.Nodes < MinNodes || o.Nodes > MaxNodes:
		return o, fmt.Errorf("demo: nodes %d must be in %d..%d", o.Nodes, MinNodes, MaxNodes)
	case o.Actors < 1 || o.Actors > MaxActors:
		return o, fmt.Errorf("demo: actors %d must be in 1..%d", o.Actors, MaxActors)
	case o.LeaseTTL < time.Second:
		return o, fmt.Errorf("demo: lease TTL %v must be at least 1s", o.LeaseTTL)
	case o.PollingInterval <= 0 || o.PollingInterval > o.LeaseTTL:
		return o, fmt.Errorf("demo: polling interval %v must be positive and at most the lease TTL", o.PollingInterval)
	case o.StageTimeout <= 0:
		return o, fmt.Errorf("demo: stage timeout %v must be positive", o.StageTimeout)
	}
	return o, nil
}

// Check reports whether the options are usable (after the defaults).
func (o Options) Check() error {
	_, err := o.resolve()
	return err
}

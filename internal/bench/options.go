package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Defaults of Options.
const (
	DefaultClients  = 16
	DefaultConns    = 1
	DefaultTotal    = 1000
	DefaultMeshSize = 100
	// MaxClients bounds Options.Clients.
	MaxClients = 1000
	// MaxMeshSize bounds Options.MeshSize (one page of ListMeshNodes).
	MaxMeshSize = 1000
)

// Options configure a benchmark. The zero value runs every operation with
// the defaults.
type Options struct {
	// Clients is the number of concurrent clients; 0 means DefaultClients.
	Clients int
	// Conns is the number of etcd connections the clients share
	// round-robin; 0 means DefaultConns.
	Conns int
	// Total is the number of requests per operation and system; 0 means
	// DefaultTotal.
	Total int
	// Rate caps the requests per second of each run; 0 means no cap.
	Rate float64
	// Ops names the operations to run (see Operations); empty means all.
	Ops []string
	// MeshSize is the number of mesh-node descriptors mesh-list reads; 0
	// means DefaultMeshSize.
	MeshSize int
	// Out receives progress lines; nil discards them.
	Out io.Writer
	// OnProgress, when set, is told how far the set-up and each run got,
	// as they go (from several goroutines).
	OnProgress func(Progress)
}

// Progress is how far one stage of a benchmark got.
type Progress struct {
	// Stage is "set-up", or an operation and its system ("lease-renew
	// (zlink)").
	Stage string
	// Done of Total units: clients and filler descriptors during the
	// set-up, requests during a run.
	Done, Total int
}

// Operations lists the operation names in run order.
func Operations() []string {
	return []string{"lease-renew", "lease-read", "actor-resolve", "actor-renew", "authority-cas", "mesh-list"}
}

// resolve applies the defaults and checks the values.
func (o Options) resolve() (Options, error) {
	o.Clients = cmp.Or(o.Clients, DefaultClients)
	o.Conns = cmp.Or(o.Conns, DefaultConns)
	o.Total = cmp.Or(o.Total, DefaultTotal)
	o.MeshSize = cmp.Or(o.MeshSize, DefaultMeshSize)
	if len(o.Ops) == 0 {
		o.Ops = Operations()
	}
	o.Out = cmp.Or(o.Out, io.Discard)
	if o.OnProgress == nil {
		o.OnProgress = func(Progress) {}
	}
	switch {
	case o.Clients < 1 || o.Clients > MaxClients:
		return o, fmt.Errorf("clients %d must be in 1..%d", o.Clients, MaxClients)
	case o.Conns < 1 || o.Conns > o.Clients:
		return o, fmt.Errorf("conns %d must be in 1..clients (%d)", o.Conns, o.Clients)
	case o.Total < 1:
		return o, fmt.Errorf("total %d must be positive", o.Total)
	case o.Rate < 0:
		return o, fmt.Errorf("rate %v must not be negative", o.Rate)
	case o.MeshSize < 1 || o.MeshSize > MaxMeshSize:
		return o, fmt.Errorf("mesh size %d must be in 1..%d", o.MeshSize, MaxMeshSize)
	}
	for _, op := range o.Ops {
		if !slices.Contains(Operations(), op) {
			return o, fmt.Errorf("unknown operation %q (operations: %s)", op, strings.Join(Operations(), ", "))
		}
	}
	return o, nil
}

// Check reports whether the options are usable (after the defaults).
func (o Options) Check() error {
	_, err := o.resolve()
	return err
}

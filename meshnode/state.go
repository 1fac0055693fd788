package meshnode

import (
	"context"
	"time"

	"github.com/zlink-systems/zlink-etcd/autoconnect"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/session"
)

// Error is the type of this package's sentinel errors.
type Error string

// Error implements error.
func (e Error) Error() string { return string(e) }

// Sentinel errors. Test with errors.Is: the errors the package returns wrap
// them with details.
const (
	// ErrLeft: Leave (or Close) ended the node.
	ErrLeft = Error("meshnode: the node left")
	// ErrOrphaned: Orphan ended the node, leaving its rows and its lease.
	ErrOrphaned = Error("meshnode: the node was orphaned (rows and lease left behind)")
	// ErrDescriptorRejected: the store refused the node's descriptor
	// although the node's lease was live: another live owner publishes the
	// same routing id in the mesh, or the node's entry spot is claimed by
	// another node. Join fails with it; a rejoin retries.
	ErrDescriptorRejected = Error("meshnode: the store refused the node's descriptor")
)

// Phase is where a node is in its life.
type Phase string

// Phases.
const (
	// PhaseJoining: Join is claiming the first lease, publishing the
	// descriptor and running the first tick.
	PhaseJoining Phase = "joining"
	// PhaseJoined: an incarnation runs: its session holds the lease and
	// its loop keeps the connections.
	PhaseJoined Phase = "joined"
	// PhaseRejoining: the last incarnation's session ended, its executor
	// connections were dropped, and the node is claiming a new lease.
	PhaseRejoining Phase = "rejoining"
	// PhaseLeaving: Leave runs.
	PhaseLeaving Phase = "leaving"
	// PhaseLeft: the node ended for good (Done is closed; Err says why).
	PhaseLeft Phase = "left"
)

// Incarnation is one life of a node: one owner lease, kept by one session,
// and one lifecycle generation. A node has at most one incarnation acting
// at a time.
type Incarnation struct {
	// Number counts the leases the node claimed: 1 for the first.
	Number int64
	// Token is the incarnation's owner lease.
	Token location.OwnerToken
	// LifecycleGeneration is the one its descriptor carries.
	LifecycleGeneration int64
	// Session keeps the lease. Session.Valid fences an action on it;
	// Session.Done closes when the incarnation ends.
	Session *session.Session
}

// incarnationKey is the context key of the Incarnation a call acts for.
type incarnationKey struct{}

// IncarnationFrom returns the incarnation that the call whose context is
// ctx acts for: the context Executor.Connect receives from a node's loop
// carries it. An executor may refuse a connection when
// inc.Session.Valid() is false (the lease is no longer trusted); the node
// disconnects every peer of an ended incarnation in any case.
func IncarnationFrom(ctx context.Context) (inc Incarnation, ok bool) {
	inc, ok = ctx.Value(incarnationKey{}).(Incarnation)
	return inc, ok
}

// EventKind names an Event.
type EventKind string

// Event kinds.
const (
	// EventJoined: an incarnation joined: its lease was claimed, its
	// descriptor published and its loop's first tick ran. Incarnation says
	// which.
	EventJoined EventKind = "joined"
	// EventJoinFailed: an attempt to join or rejoin failed (Err); the next
	// one follows after Retry.
	EventJoinFailed EventKind = "join-failed"
	// EventLeaseLost: the current incarnation's lease can no longer be
	// trusted: its session ended, or its trust deadline passed (Err says
	// why: errors wrapping session.ErrLeaseLost or
	// session.ErrDeadlinePassed). It is sent before the executor is told to
	// disconnect: stop every action fenced by the lease at once.
	// TrustedUntil is the last moment the lease was trusted.
	EventLeaseLost EventKind = "lease-lost"
	// EventFenced: every connection of the ended incarnation was
	// disconnected, and its loop is stopping without a store call: a tick
	// in flight has its context cancelled and connects nothing more (it
	// returns when its store call does, which a store resolving a lost
	// answer may delay by its resolve timeout).
	EventFenced EventKind = "fenced"
	// EventDesiredSetChanged: a tick connected or disconnected peers
	// (Change).
	EventDesiredSetChanged EventKind = "desired-set-changed"
	// EventLeft: the node ended for good (Err: ErrLeft, ErrOrphaned, the
	// session's error with NoRejoin, or why rejoining cannot succeed).
	EventLeft EventKind = "left"
)

// Event is something that happened to a node (Options.OnEvent).
type Event struct {
	Kind EventKind
	// At is when it happened, on the node's clock.
	At time.Time
	// Incarnation is the incarnation it concerns (the one that joined, lost
	// its lease or was fenced; the current one otherwise; zero before the
	// first).
	Incarnation Incarnation
	// Err is the cause (EventJoinFailed, EventLeaseLost, EventLeft).
	Err error
	// Attempt counts the attempts since the node started joining or
	// rejoining (EventJoinFailed), and Retry is the wait before the next.
	Attempt int
	Retry   time.Duration
	// TrustedUntil is the last moment the ended lease was trusted
	// (EventLeaseLost, EventFenced): the session's trust deadline, or its
	// end when that came first.
	TrustedUntil time.Time
	// Change is what a tick changed (EventDesiredSetChanged).
	Change *autoconnect.DesiredSetChange
}

// TickReport is the last tick of a node's loop.
type TickReport struct {
	// Started is when it began (node clock), Took how long it ran.
	Started time.Time
	Took    time.Duration
	// Skipped, StoreFailed and Err are autoconnect.TickReport's.
	Skipped     bool
	StoreFailed bool
	Err         error
}

// State is a snapshot of a node, for health checks and metrics. Every
// field is read under the node's, the session's or the reconciler's lock.
type State struct {
	Phase Phase
	// Incarnation is the current incarnation, or the last one while the
	// node rejoins or after it left (zero before the first claim).
	Incarnation Incarnation
	// Session is the incarnation's session status, and Trusted whether its
	// lease may be trusted now.
	Session session.Status
	Trusted bool
	// JoinedAt is when the incarnation joined (node clock).
	JoinedAt time.Time
	// PeerRowPublished: with Options.PublishPeerRow, the peer row is
	// believed published.
	PeerRowPublished bool
	// StoreFailed: the loop's last tick ended in a store failure (the node
	// keeps its connections and retries).
	StoreFailed bool
	// Desired is the size of the last desired set and Connected the number
	// of targets believed connected (both 0 once the incarnation ended).
	Desired, Connected int
	// Ticks counts the ticks of all incarnations; LastTick is the last.
	Ticks    int64
	LastTick TickReport
	// LeaseLosses counts the incarnations whose session ended; LastLoss is
	// the last one's cause and LastLossAt when it ended.
	LeaseLosses int64
	LastLoss    error
	LastLossAt  time.Time
	// JoinAttempts counts the failed attempts (failed claims included)
	// since the node last started joining or rejoining; LastJoinError is
	// the last one's error. Both are reset when an incarnation joins.
	JoinAttempts  int
	LastJoinError error
	// Err is why the node left (PhaseLeft).
	Err error
}

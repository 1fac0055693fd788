// Package statedoc is the document a meshnode serves at /debug/state: the
// node as it sees itself. The meshnode command writes it, and the tests
// that drive meshnode processes (its own, and deploy's cluster test) read
// it with these same types.
package statedoc

import "time"

// State is the /debug/state document.
type State struct {
	Time          time.Time    `json:"time"`
	NodeID        string       `json:"nodeId"`
	Mesh          string       `json:"mesh"`
	Endpoint      string       `json:"endpoint"`
	Version       string       `json:"version"`
	StartedAt     time.Time    `json:"startedAt"`
	Timing        Timing       `json:"timing"`
	Phase         string       `json:"phase"`
	Stopping      bool         `json:"stopping"`
	Trusted       bool         `json:"trusted"`
	Incarnation   *Incarnation `json:"incarnation,omitempty"`
	StoreFailed   bool         `json:"storeFailed"`
	Desired       int          `json:"desired"`
	Connected     int          `json:"connected"`
	Ticks         int64        `json:"ticks"`
	LeaseLosses   int64        `json:"leaseLosses"`
	LastLoss      string       `json:"lastLoss,omitempty"`
	JoinAttempts  int          `json:"joinAttempts"`
	LastJoinError string       `json:"lastJoinError,omitempty"`
	// Peers are the nodes with an open link, either way, sorted.
	Peers  []string    `json:"peers"`
	Links  []Link      `json:"links"`
	Fences []Fence     `json:"fences"`
	Actors *ActorStats `json:"actors,omitempty"`
}

// Duration is a time.Duration that JSON shows as Go writes it ("1.5s").
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}

// Timing is the session and auto-connect timing in effect (the packages'
// defaults for the flags left at 0).
type Timing struct {
	LeaseTTL      Duration `json:"leaseTtl"`
	RenewInterval Duration `json:"renewInterval"`
	RenewTimeout  Duration `json:"renewTimeout"`
	FencingMargin Duration `json:"fencingMargin"`
	PollInterval  Duration `json:"pollInterval"`
}

// Lease is an incarnation's lease as the node last saw it: its
// generations, its last confirmed renewal and the end of the trust that
// renewal gave (TrustedUntil = LastRenewal + TTL − fencing margin).
type Lease struct {
	LeaseGeneration     int64     `json:"leaseGeneration"`
	LifecycleGeneration int64     `json:"lifecycleGeneration"`
	LastRenewal         time.Time `json:"lastRenewal"`
	TrustedUntil        time.Time `json:"trustedUntil"`
}

// Incarnation is the current incarnation and its session.
type Incarnation struct {
	Number int64 `json:"number"`
	Lease
	Renewals         int64  `json:"renewals"`
	RenewalFailures  int    `json:"renewalFailures"`
	LastRenewalError string `json:"lastRenewalError,omitempty"`
}

// Fence is one incarnation whose lease stopped being trusted, with the
// node's own timestamps: the fence must come before TrustedUntil has long
// passed, and well before LastRenewal + TTL, when etcd may end the lease.
type Fence struct {
	Incarnation int64 `json:"incarnation"`
	Lease
	LeaseLostAt      time.Time `json:"leaseLostAt"`
	InboundDroppedAt time.Time `json:"inboundDroppedAt"`
	FencedAt         time.Time `json:"fencedAt"`
	Cause            string    `json:"cause"`
}

// Link is an open link to a peer.
type Link struct {
	Peer          string `json:"peer"`
	PeerLifecycle int64  `json:"peerLifecycle"`
	// Direction says who dialed: "out" (this node) or "in" (the peer).
	Direction string    `json:"direction"`
	Endpoint  string    `json:"endpoint,omitempty"`
	Since     time.Time `json:"since"`
}

// ActorStats are the actor writer's counts.
type ActorStats struct {
	Created   int64  `json:"created"`
	RowStored int64  `json:"rowsStored"`
	Failed    int64  `json:"failed"`
	Skipped   int64  `json:"skipped"`
	LastError string `json:"lastError,omitempty"`
}

package etcdtest

import (
	"cmp"
	"time"

	"go.uber.org/zap"
)

// Default timing of an embedded member: fast elections so that tests and
// leader changes finish quickly. The server's minimum lease TTL is
// ceil(1.5 × ElectionMs) rounded up to whole seconds: one second here.
const (
	DefaultTickMs       = 10
	DefaultElectionMs   = 100
	DefaultStartTimeout = 30 * time.Second
)

// Config configures an embedded member. The zero value is usable.
type Config struct {
	// Name is the member name; "" means "member0" (or "memberN" in a cluster).
	Name string
	// Dir is the data directory; "" creates a temporary directory that Close
	// removes.
	Dir string
	// Fsync turns fsync on. Off by default (etcd's UnsafeNoFsync): fast, and
	// unsafe for anything but tests.
	Fsync bool
	// TickMs and ElectionMs are the heartbeat interval and election timeout;
	// 0 means DefaultTickMs and DefaultElectionMs.
	TickMs, ElectionMs uint
	// MaxTxnOps and MaxRequestBytes are the server limits; 0 keeps etcd's
	// defaults (128 operations, 1.5 MiB).
	MaxTxnOps, MaxRequestBytes uint
	// Unix makes the member serve clients on a unix socket inside its data
	// directory instead of a loopback TCP port.
	Unix bool
	// TLS, when set, serves clients over TLS with these files.
	TLS *TLSFiles
	// BcryptCost is the password hashing cost for etcd users; 0 means 4, the
	// cheapest, which keeps authentication tests fast.
	BcryptCost uint
	// StartTimeout bounds the wait for the member to be ready; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Logger receives the server's logs; nil discards them.
	Logger *zap.Logger
}

// TLSFiles names the PEM files of a TLS-serving member.
type TLSFiles struct {
	CertFile, KeyFile string
	// TrustedCAFile, with ClientCertAuth, makes the member verify client
	// certificates against this CA.
	TrustedCAFile  string
	ClientCertAuth bool
}

func (c Config) tickMs() uint { return cmp.Or(c.TickMs, DefaultTickMs) }

func (c Config) electionMs() uint { return cmp.Or(c.ElectionMs, DefaultElectionMs) }

func (c Config) startTimeout() time.Duration {
	if c.StartTimeout <= 0 {
		return DefaultStartTimeout
	}
	return c.StartTimeout
}

func (c Config) logger() *zap.Logger { return cmp.Or(c.Logger, zap.NewNop()) }

func (c Config) bcryptCost() uint { return cmp.Or(c.BcryptCost, 4) }

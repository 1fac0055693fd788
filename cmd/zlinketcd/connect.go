package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/keys"
)

// probeDelay is how long a connection may take before the endpoints are
// probed for a TLS mismatch (a healthy cluster answers sooner, and is not
// probed).
const probeDelay = 150 * time.Millisecond

// preflightKey is the key, inside --prefix, that the write preflight names
// in a transaction that can never apply.
const preflightKey = "zlinketcd-preflight"

// sessionOptions say what a subcommand needs of its session.
type sessionOptions struct {
	// write: the subcommand writes under --prefix, so the preflight checks
	// the write permission as well as the read permission.
	write bool
	// serializable: every read of the session is served by the member the
	// client talks to, without the leader (inspect --consistency s).
	serializable bool
	// fsync: an embedded member syncs its writes to disk, as production
	// etcd does (bench mesh measures etcd's cost).
	fsync bool
}

// session is one connection to a cluster: the raw client (inspect, bench
// and the scratch prefixes read and write keys directly), the store over
// the --prefix root, and the embedded member when the command started one.
// Every request through client and store is bounded by the run's guard.
type session struct {
	cfg    connConfig
	opts   sessionOptions
	client *clientv3.Client
	// raw is the client's keys and leases without the guard, for the
	// clean-up after the run ended.
	raw       rawEtcd
	store     *etcdstore.Store
	member    *etcdtest.Member
	log       *slog.Logger
	guard     *guard
	endpoints []string
	describe  string
	// stop ends the client's own context.
	stop context.CancelFunc
}

// open connects as the connection flags say (to the endpoints, or to a new
// embedded single-member etcd, announced on stderr), checks within the
// dial timeout that the cluster answers and lets the user read --prefix
// (and write it, with opts.write), and puts the guard on every request.
func (e *env) open(ctx context.Context, opts sessionOptions) (*session, error) {
	cfg := e.conn
	if len(cfg.Endpoints) == 0 && !cfg.Embedded {
		return nil, errNoEndpoints()
	}
	s := &session{cfg: cfg, opts: opts, log: e.log, guard: e.guard, endpoints: cfg.Endpoints}
	if cfg.Embedded {
		m, err := etcdtest.StartMember(ctx, etcdtest.Config{Fsync: opts.fsync})
		if err != nil {
			return nil, fmt.Errorf("start the embedded etcd: %w", err)
		}
		s.member = m
		s.endpoints = m.Endpoints()
		why := "no --endpoints given"
		if e.embeddedAsked {
			why = "--embedded"
		}
		fmt.Fprintf(e.stderr, "zlinketcd: %s: started an embedded single-member etcd at %s (temporary directory, removed on exit)\n",
			why, strings.Join(s.endpoints, ","))
	}
	s.describe = strings.Join(s.endpoints, ",")
	client, err := s.connect(ctx)
	if err != nil {
		s.close()
		return nil, err
	}
	s.client = client
	s.raw = s.guard.install(client)
	s.guard.setDiagnosis(func(ctx context.Context) error {
		return diagnoseCluster(ctx, client, s.endpoints, fmt.Sprintf("--command-timeout %v", cfg.CommandTimeout))
	})
	e.explain = s.explain
	if opts.write {
		if err := s.preflightWrite(ctx); err != nil {
			s.close()
			return nil, err
		}
	}
	so := etcdStoreOptions(s)
	so.Root = cfg.Prefix
	if opts.serializable {
		so.KV = serializableKV{KV: client.KV}
	}
	store, err := etcdstore.New(client, so)
	if err != nil {
		s.close()
		return nil, err
	}
	s.store = store
	return s, nil
}

// clientConfig is the etcd client configuration of the flags: the store's
// own (etcdstore.Config, so that the command and Dial set up TLS and
// credentials the same way), with --insecure-skip-tls-verify.
func (s *session) clientConfig(endpoints []string) (clientv3.Config, error) {
	cc, err := etcdstore.Config{
		Endpoints:   endpoints,
		TLS:         s.cfg.TLS,
		Username:    s.cfg.Username,
		Password:    s.cfg.Password,
		DialTimeout: s.cfg.DialTimeout,
	}.ClientConfig()
	if err != nil {
		return cc, withFlagNames(err)
	}
	if s.cfg.InsecureSkipVerify {
		if cc.TLS == nil {
			cc.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		cc.TLS.InsecureSkipVerify = true
	}
	return cc, nil
}

// dialed is the result of making a client and pinging the cluster.
type dialed struct {
	client *clientv3.Client
	err    error
}

// connect makes the client and pings the cluster within the dial timeout.
// A connection that takes longer than probeDelay has its endpoints probed
// meanwhile, so that a TLS mismatch or endpoints that refuse connections
// are reported at once, by their cause.
func (s *session) connect(ctx context.Context) (*clientv3.Client, error) {
	cc, err := s.clientConfig(s.endpoints)
	if err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.WithoutCancel(ctx))
	cc.Context = life
	dctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	done := make(chan dialed, 1)
	go func() {
		c, err := clientv3.New(cc)
		if err == nil {
			err = s.ping(dctx, c)
		}
		done <- dialed{c, err}
	}()
	abort := func() {
		cancel()
		stop()
		if r := <-done; r.client != nil {
			_ = r.client.Close()
		}
	}
	pctx, stopProbe := context.WithCancel(dctx)
	defer stopProbe()
	var probed chan error
	probeAt := time.NewTimer(probeDelay)
	defer probeAt.Stop()
	for {
		select {
		case r := <-done:
			var perr error
			if probed != nil && r.err == nil {
				stopProbe()
			}
			if probed != nil {
				perr = <-probed // after a failure the probe names a TLS mismatch best
			}
			stopProbe()
			if r.err != nil {
				err := perr
				if err == nil {
					err = s.explainConnect(ctx, cc, r.err)
				}
				if r.client != nil {
					_ = r.client.Close()
				}
				stop()
				return nil, err
			}
			s.stop = stop
			return r.client, nil
		case <-probeAt.C:
			probed = make(chan error, 1)
			p := prober{tls: cc.TLS}
			if s.cfg.TLS != nil {
				p.caFile, p.certFile, p.serverName = s.cfg.TLS.CAFile, s.cfg.TLS.CertFile, s.cfg.TLS.ServerName
			}
			go func() { probed <- p.probeAll(pctx, s.endpoints) }()
		case err := <-probed:
			probed = nil
			if err != nil {
				abort()
				return nil, err
			}
		case <-ctx.Done():
			stopProbe()
			if probed != nil {
				<-probed
			}
			abort()
			return nil, context.Cause(ctx)
		}
	}
}

// ping reads the key count under the prefix: the cluster answers and the
// user may read the prefix.
func (s *session) ping(ctx context.Context, c *clientv3.Client) error {
	opts := []clientv3.OpOption{clientv3.WithRange(keys.PrefixEnd(s.cfg.Prefix)), clientv3.WithCountOnly()}
	if s.opts.serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	_, err := c.Get(ctx, s.cfg.Prefix, opts...)
	return err
}

// explainConnect turns a failed connection into an error that says why.
func (s *session) explainConnect(ctx context.Context, cc clientv3.Config, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !isTimeout(err) {
		return fmt.Errorf("etcd at %s: %s", s.describe, s.explainText(err, "read"))
	}
	// The status requests of the diagnosis need no quorum; a client without
	// the password does not wait for an authentication that needs one.
	cc.Username, cc.Password = "", ""
	diag, derr := clientv3.New(cc)
	if derr != nil {
		return fmt.Errorf("cannot reach etcd at %s within --dial-timeout %v", s.describe, s.cfg.DialTimeout)
	}
	defer func() { _ = diag.Close() }()
	cause := diagnoseCluster(ctx, diag, s.endpoints, fmt.Sprintf("--dial-timeout %v", s.cfg.DialTimeout))
	if errors.Is(cause, errUnreachable) {
		hint := "is it running and reachable? (a TLS cluster needs https:// endpoints and --cacert)"
		if s.cfg.TLS != nil || strings.Contains(s.describe, "https://") {
			hint = "is it running, and do --cacert/--cert/--key and the https:// scheme match its TLS setup?"
		}
		return &clusterError{kind: errUnreachable, msg: fmt.Sprintf("cannot reach etcd at %s within --dial-timeout %v: %s",
			s.describe, s.cfg.DialTimeout, hint)}
	}
	return cause
}

// isTimeout reports whether a request failed by running out of time.
func isTimeout(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded
}

// preflightWrite checks the write permission on --prefix with a
// transaction whose condition never holds (etcd checks the permission of
// every operation a transaction names, applied or not).
func (s *session) preflightWrite(ctx context.Context) error {
	key := s.cfg.Prefix + preflightKey
	_, err := s.client.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "<", 0)).Then(clientv3.OpPut(key, "")).Commit()
	if err == nil {
		return nil
	}
	if c := s.guard.cause(); c != nil {
		return c
	}
	return fmt.Errorf("etcd at %s: %s", s.describe, s.explainText(err, "write"))
}

// close releases the client and stops the embedded member.
func (s *session) close() {
	if s.store != nil {
		_ = s.store.Close()
	}
	if s.client != nil {
		_ = s.client.Close()
	}
	if s.stop != nil {
		s.stop()
	}
	if s.member != nil {
		_ = s.member.Close()
	}
}

// userName is the etcd user the session authenticates as: --user, or the
// CommonName of the client certificate; "" when neither.
func (s *session) userName() (name, how string) {
	if s.cfg.Username != "" {
		return s.cfg.Username, ""
	}
	if s.cfg.TLS == nil || s.cfg.TLS.CertFile == "" {
		return "", ""
	}
	b, err := os.ReadFile(s.cfg.TLS.CertFile)
	if err != nil {
		return "", ""
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return "", ""
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || cert.Subject.CommonName == "" {
		return "", ""
	}
	return cert.Subject.CommonName, " (the CommonName of --cert " + s.cfg.TLS.CertFile + ")"
}

// explain rewords an error of the run when it is one of etcd's refusals.
func (s *session) explain(err error) (string, bool) {
	if !isEtcdRefusal(err) {
		return "", false
	}
	action := "write"
	if !s.opts.write {
		action = "read"
	}
	return s.explainText(err, action), true
}

// isEtcdRefusal reports whether err is an authentication or permission
// refusal.
func isEtcdRefusal(err error) bool {
	for _, r := range []error{rpctypes.ErrAuthFailed, rpctypes.ErrPermissionDenied, rpctypes.ErrUserEmpty, rpctypes.ErrAuthNotEnabled} {
		if errors.Is(err, r) || strings.Contains(err.Error(), r.Error()) {
			return true
		}
	}
	return false
}

// explainText names the usual etcd refusals in plain words: the user, and
// what it may not do where (action is read or write).
func (s *session) explainText(err error, action string) string {
	has := func(r error) bool { return errors.Is(err, r) || strings.Contains(err.Error(), r.Error()) }
	user, how := s.userName()
	switch {
	case has(rpctypes.ErrAuthFailed):
		return fmt.Sprintf("authentication failed for etcd user %q: wrong user name or password", user)
	case has(rpctypes.ErrPermissionDenied) && user != "":
		perm := "read"
		if action == "write" {
			perm = "readwrite"
		}
		return fmt.Sprintf("permission denied: etcd user %q%s may not %s the prefix %s (its role needs: etcdctl role grant-permission ROLE --prefix=true %s %s)",
			user, how, action, s.cfg.Prefix, perm, s.cfg.Prefix)
	case has(rpctypes.ErrPermissionDenied):
		return fmt.Sprintf("permission denied: may not %s the prefix %s", action, s.cfg.Prefix)
	case has(rpctypes.ErrUserEmpty):
		return "the cluster requires authentication: pass --user, or --cert/--key with a certificate whose CommonName is an etcd user"
	case has(rpctypes.ErrAuthNotEnabled):
		return "authentication is not enabled on the cluster: drop --user"
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// tlsFlag names the flag that gives a TLS file.
func tlsFlag(role etcdstore.TLSFileRole) string {
	switch role {
	case etcdstore.TLSCAFile:
		return "--cacert"
	case etcdstore.TLSCertFile:
		return "--cert"
	case etcdstore.TLSKeyFile:
		return "--key"
	default:
		return "--cert / --key"
	}
}

// withFlagNames rewords a TLS file error with the flags that named the
// files.
func withFlagNames(err error) error {
	var fe *etcdstore.TLSFileError
	if !errors.As(err, &fe) {
		return err
	}
	return fmt.Errorf("tls: %s %s: %w", tlsFlag(fe.Role), strings.Join(fe.Paths, " / "), fe.Err)
}

// etcdStoreOptions are the options of the stores the subcommands make
// (their Root is set by the caller).
func etcdStoreOptions(s *session) etcdstore.Options {
	return etcdstore.Options{Logger: s.log}
}

// serializableKV makes every read serializable: served by the member the
// client talks to from its own copy, without asking the leader (possibly
// stale, but available while the cluster has no quorum).
type serializableKV struct{ clientv3.KV }

// Get implements clientv3.KV.
func (k serializableKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return k.KV.Get(ctx, key, append(opts, clientv3.WithSerializable())...)
}

// Txn implements clientv3.KV: the gets of a read-only transaction are
// serializable.
func (k serializableKV) Txn(ctx context.Context) clientv3.Txn {
	return serializableTxn{Txn: k.KV.Txn(ctx)}
}

// serializableTxn makes the gets of a transaction serializable.
type serializableTxn struct{ clientv3.Txn }

// Then implements clientv3.Txn.
func (t serializableTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	return serializableTxn{Txn: t.Txn.Then(serializable(ops)...)}
}

// Else implements clientv3.Txn.
func (t serializableTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return serializableTxn{Txn: t.Txn.Else(serializable(ops)...)}
}

// If implements clientv3.Txn.
func (t serializableTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	return serializableTxn{Txn: t.Txn.If(cs...)}
}

// serializable returns ops with every get made serializable.
func serializable(ops []clientv3.Op) []clientv3.Op {
	out := make([]clientv3.Op, len(ops))
	for i, op := range ops {
		if op.IsGet() {
			clientv3.WithSerializable()(&op)
		}
		out[i] = op
	}
	return out
}

// extraClient makes another client to the session's endpoints (bench's
// --conns), under the run's guard. Close it when done.
func (s *session) extraClient() (*clientv3.Client, error) {
	cc, err := s.clientConfig(s.endpoints)
	if err != nil {
		return nil, err
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %s", s.describe, s.explainText(err, "read"))
	}
	s.guard.install(c)
	return c, nil
}

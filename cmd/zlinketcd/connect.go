package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

// session is one connection to a cluster: the raw client (inspect, bench
// and the scratch prefixes read and write keys directly), the store over
// the --prefix root, and the embedded member when the command started one.
type session struct {
	cfg      connConfig
	client   *clientv3.Client
	store    *etcdstore.Store
	member   *etcdtest.Member
	log      *slog.Logger
	describe string
}

// open connects as cfg says: to the endpoints, or to a new embedded
// single-member etcd (announced on stderr) when there are none. It checks
// that the cluster answers within the dial timeout.
func open(ctx context.Context, cfg connConfig, stderr io.Writer, log *slog.Logger) (*session, error) {
	s := &session{cfg: cfg, log: log}
	endpoints := cfg.Endpoints
	if cfg.embedded() {
		m, err := etcdtest.StartMember(ctx, etcdtest.Config{})
		if err != nil {
			return nil, fmt.Errorf("start the embedded etcd: %w", err)
		}
		s.member = m
		endpoints = m.Endpoints()
		fmt.Fprintf(stderr, "zlinketcd: no --endpoints given: started an embedded single-member etcd at %s (temporary directory, removed on exit)\n",
			strings.Join(endpoints, ","))
	}
	s.describe = strings.Join(endpoints, ",")
	client, err := dial(cfg, endpoints)
	if err != nil {
		s.close()
		return nil, err
	}
	s.client = client
	if err := s.ping(ctx); err != nil {
		s.close()
		return nil, err
	}
	store, err := etcdstore.New(client, etcdstore.Options{Root: cfg.Prefix, Logger: log})
	if err != nil {
		s.close()
		return nil, err
	}
	s.store = store
	return s, nil
}

// dial makes the client; it does not wait for a connection. The client
// configuration (TLS, credentials) is the store's own (etcdstore.Config), so
// that the command and Dial set up a connection the same way.
func dial(cfg connConfig, endpoints []string) (*clientv3.Client, error) {
	cc, err := etcdstore.Config{
		Endpoints:   endpoints,
		TLS:         cfg.TLS,
		Username:    cfg.Username,
		Password:    cfg.Password,
		DialTimeout: cfg.DialTimeout,
	}.ClientConfig()
	if err != nil {
		return nil, withFlagNames(err)
	}
	c, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %s", strings.Join(endpoints, ","), describeEtcdError(err))
	}
	return c, nil
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

// ping reads one key count under the prefix, within the dial timeout.
func (s *session) ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	_, err := s.client.Get(pctx, s.cfg.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded || status.Code(err) == codes.Unavailable {
		hint := "is it running and reachable?"
		if s.cfg.TLS != nil || strings.Contains(s.describe, "https://") {
			hint = "is it running, and do --cacert/--cert/--key and the https:// scheme match its TLS setup?"
		} else {
			hint += " (a TLS cluster needs https:// endpoints and --cacert)"
		}
		return fmt.Errorf("cannot reach etcd at %s within %v: %s", s.describe, s.cfg.DialTimeout, hint)
	}
	return fmt.Errorf("etcd at %s: %s", s.describe, describeEtcdError(err))
}

// close releases the client and stops the embedded member.
func (s *session) close() {
	if s.store != nil {
		_ = s.store.Close()
	}
	if s.client != nil {
		_ = s.client.Close()
	}
	if s.member != nil {
		_ = s.member.Close()
	}
}

// describeEtcdError names the usual etcd refusals in plain words.
func describeEtcdError(err error) string {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed) || strings.Contains(err.Error(), rpctypes.ErrAuthFailed.Error()):
		return "authentication failed: wrong user name or password"
	case errors.Is(err, rpctypes.ErrPermissionDenied) || strings.Contains(err.Error(), rpctypes.ErrPermissionDenied.Error()):
		return "permission denied: the user's role does not cover the prefix"
	case errors.Is(err, rpctypes.ErrUserEmpty) || strings.Contains(err.Error(), rpctypes.ErrUserEmpty.Error()):
		return "the cluster requires authentication: pass --user"
	case errors.Is(err, rpctypes.ErrAuthNotEnabled) || strings.Contains(err.Error(), rpctypes.ErrAuthNotEnabled.Error()):
		return "authentication is not enabled on the cluster: drop --user"
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// etcdStoreOptions are the options of the stores the subcommands make
// under scratch prefixes (their Root is set by the caller).
func etcdStoreOptions(s *session) etcdstore.Options {
	return etcdstore.Options{Logger: s.log}
}

package etcdstore

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/tlsutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/location"
)

// DefaultDialTimeout bounds the first connection of Dial.
const DefaultDialTimeout = 5 * time.Second

// Config says how to reach an etcd cluster. Its String, GoString and
// LogValue never show the password.
type Config struct {
	// Endpoints are the client URLs of the cluster (at least one).
	Endpoints []string
	// DialTimeout bounds the first connection; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// TLS, when set, connects over TLS.
	TLS *TLSFiles
	// Username and Password authenticate with etcd's user/password auth.
	Username, Password string
	// Options configure the store.
	Options Options
}

// TLSFiles names the PEM files of a TLS connection.
type TLSFiles struct {
	// CertFile and KeyFile are the client certificate and key (optional:
	// only for clusters that verify clients).
	CertFile, KeyFile string
	// CAFile verifies the servers; empty uses the system roots.
	CAFile string
	// ServerName overrides the name the server certificate must carry.
	ServerName string
}

// String describes the configuration without the password.
func (c Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "etcd %s", strings.Join(c.Endpoints, ","))
	if c.TLS != nil {
		b.WriteString(" tls")
	}
	if c.Username != "" {
		fmt.Fprintf(&b, " user %s", c.Username)
	}
	return b.String()
}

// GoString is String, so that %#v does not show the password either.
func (c Config) GoString() string { return c.String() }

// LogValue makes slog print the configuration without the password.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Any("endpoints", c.Endpoints), slog.Bool("tls", c.TLS != nil)}
	if c.Username != "" {
		attrs = append(attrs, slog.String("user", c.Username), slog.String("password", "[redacted]"))
	}
	return slog.GroupValue(attrs...)
}

// Dial connects to the cluster, checks that it answers (within ctx and the
// dial timeout) and returns a store that owns the client: Close closes it.
func Dial(ctx context.Context, cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("etcdstore: dial: %w: no endpoints", location.ErrInvalidArgument)
	}
	timeout := cfg.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	var tlsConfig *tls.Config
	if cfg.TLS != nil {
		info := transport.TLSInfo{CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile,
			TrustedCAFile: cfg.TLS.CAFile, ServerName: cfg.TLS.ServerName}
		var err error
		if info.CertFile == "" && info.KeyFile == "" {
			tlsConfig, err = clientOnlyTLS(info)
		} else {
			tlsConfig, err = info.ClientConfig()
		}
		if err != nil {
			return nil, fmt.Errorf("etcdstore: dial %s: tls: %w", cfg, err)
		}
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: timeout,
		TLS:         tlsConfig,
		Username:    cfg.Username,
		Password:    cfg.Password,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcdstore: dial %s: %w: %w", cfg, location.ErrUnavailable, err)
	}
	s, err := New(client, cfg.Options)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s.ownsClient = true
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := s.currentRevision(pctx); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("etcdstore: dial %s: %w: %w", cfg, location.ErrUnavailable, err)
	}
	return s, nil
}

// clientOnlyTLS is the TLS configuration of a client without a certificate:
// the servers are verified against the CA file (or the system roots).
func clientOnlyTLS(info transport.TLSInfo) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: info.ServerName}
	if info.TrustedCAFile != "" {
		pool, err := tlsutil.NewCertPool([]string{info.TrustedCAFile})
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

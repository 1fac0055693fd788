package etcdstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/tlsutil"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

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
	// DialOptions are added to the gRPC dial options of the client (for
	// example otelgrpc's stats handler, which traces every request: package
	// observe/etcdobserve).
	DialOptions []grpc.DialOption
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
	cc, err := cfg.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcdstore: dial %s: %w", cfg, err)
	}
	client, err := clientv3.New(cc)
	if err != nil {
		return nil, fmt.Errorf("etcdstore: dial %s: %w: %w", cfg, location.ErrUnavailable, err)
	}
	s, err := New(client, cfg.Options)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	s.ownsClient = true
	pctx, cancel := context.WithTimeout(ctx, cc.DialTimeout)
	defer cancel()
	if _, err := s.currentRevision(pctx); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("etcdstore: dial %s: %w: %w", cfg, location.ErrUnavailable, err)
	}
	return s, nil
}

// ClientConfig returns the etcd client configuration that Dial connects
// with: the endpoints, the dial timeout (DefaultDialTimeout when 0), the TLS
// material read from the files, the credentials, the extra DialOptions and
// a silent logger.
// Callers that need a client of their own beside the store (the command's
// inspect and bench read and write keys directly) build it from this, so
// that TLS and authentication are set up in one place. No endpoints is an
// error wrapping location.ErrInvalidArgument; a TLS file that cannot be
// used is a *TLSFileError naming it.
func (c Config) ClientConfig() (clientv3.Config, error) {
	if len(c.Endpoints) == 0 {
		return clientv3.Config{}, fmt.Errorf("%w: no endpoints", location.ErrInvalidArgument)
	}
	timeout := c.DialTimeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	var tlsConfig *tls.Config
	if c.TLS != nil {
		var err error
		if tlsConfig, err = c.TLS.clientConfig(); err != nil {
			return clientv3.Config{}, err
		}
	}
	cc := clientv3.Config{
		Endpoints:   c.Endpoints,
		DialTimeout: timeout,
		TLS:         tlsConfig,
		Username:    c.Username,
		Password:    c.Password,
		Logger:      zap.NewNop(),
	}
	if c.TLS != nil && c.TLS.ServerName != "" {
		// gRPC sets the TLS server name (SNI and verification) from the
		// connection's authority, overriding tls.Config.ServerName.
		cc.DialOptions = append(cc.DialOptions, grpc.WithAuthority(c.TLS.ServerName))
	}
	cc.DialOptions = append(cc.DialOptions, c.DialOptions...)
	return cc, nil
}

// TLSFileRole names the part a file plays in a TLS configuration.
type TLSFileRole string

// TLS file roles.
const (
	TLSCAFile   TLSFileRole = "CA file"
	TLSCertFile TLSFileRole = "certificate file"
	TLSKeyFile  TLSFileRole = "key file"
	// TLSKeyPair is a certificate file and a key file that do not belong
	// together (or cannot be parsed together).
	TLSKeyPair TLSFileRole = "certificate and key"
)

// TLSFileError reports a TLS file that cannot be used.
type TLSFileError struct {
	Role TLSFileRole
	// Paths is the file, or for TLSKeyPair the certificate and key files.
	Paths []string
	Err   error
}

// Error names the role, the file(s) and the problem.
func (e *TLSFileError) Error() string {
	return fmt.Sprintf("tls: %s %s: %v", e.Role, strings.Join(e.Paths, " / "), e.Err)
}

// Unwrap returns the problem.
func (e *TLSFileError) Unwrap() error { return e.Err }

// clientConfig reads the files into a client TLS configuration. Each file
// is checked first, so that a problem names its file; the configuration
// with a client certificate reloads it on every handshake (certificate
// rotation, etcd's transport.TLSInfo).
func (f *TLSFiles) clientConfig() (*tls.Config, error) {
	if f.CAFile != "" {
		pem, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, &TLSFileError{Role: TLSCAFile, Paths: []string{f.CAFile}, Err: withoutPath(err)}
		}
		if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			return nil, &TLSFileError{Role: TLSCAFile, Paths: []string{f.CAFile}, Err: errors.New("holds no PEM certificate")}
		}
	}
	info := transport.TLSInfo{CertFile: f.CertFile, KeyFile: f.KeyFile, TrustedCAFile: f.CAFile, ServerName: f.ServerName}
	if f.CertFile == "" && f.KeyFile == "" {
		return clientOnlyTLS(info)
	}
	for _, file := range []struct {
		role TLSFileRole
		path string
	}{{TLSCertFile, f.CertFile}, {TLSKeyFile, f.KeyFile}} {
		if _, err := os.Stat(file.path); err != nil {
			return nil, &TLSFileError{Role: file.role, Paths: []string{file.path}, Err: withoutPath(err)}
		}
	}
	if _, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile); err != nil {
		return nil, &TLSFileError{Role: TLSKeyPair, Paths: []string{f.CertFile, f.KeyFile}, Err: err}
	}
	cfg, err := info.ClientConfig()
	if err != nil {
		return nil, &TLSFileError{Role: TLSKeyPair, Paths: []string{f.CertFile, f.KeyFile}, Err: err}
	}
	return cfg, nil
}

// clientOnlyTLS is the TLS configuration of a client without a certificate:
// the servers are verified against the CA file (or the system roots).
func clientOnlyTLS(info transport.TLSInfo) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: info.ServerName}
	if info.TrustedCAFile != "" {
		pool, err := tlsutil.NewCertPool([]string{info.TrustedCAFile})
		if err != nil {
			return nil, &TLSFileError{Role: TLSCAFile, Paths: []string{info.TrustedCAFile}, Err: err}
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// withoutPath drops the path from a file error (the TLSFileError names it).
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

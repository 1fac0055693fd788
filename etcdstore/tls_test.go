package etcdstore

import (
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/testpki"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestDialTLS(t *testing.T) {
	ca := testpki.New(t, "test-ca")
	serverCert, serverKey := ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	caFile := ca.CAFile()
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{TLS: &etcdtest.TLSFiles{
		CertFile: serverCert, KeyFile: serverKey, TrustedCAFile: caFile, ClientCertAuth: true}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })

	s, err := Dial(t.Context(), Config{Endpoints: m.Endpoints(),
		TLS: &TLSFiles{CertFile: clientCert, KeyFile: clientKey, CAFile: caFile}})
	require.NoError(t, err)
	res, err := s.ClaimOwnerLease(t.Context(), "a", time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, res.Kind)
	require.NoError(t, s.Close())

	// Without a client certificate the member refuses the connection.
	_, err = Dial(t.Context(), Config{Endpoints: m.Endpoints(), DialTimeout: time.Second, TLS: &TLSFiles{CAFile: caFile}})
	require.ErrorIs(t, err, location.ErrUnavailable)
}

// A TLS file that cannot be used is reported before any connection, as a
// *TLSFileError naming its role and path.
func TestClientConfigTLSFileErrors(t *testing.T) {
	ca := testpki.New(t, "test-ca")
	clientCert, clientKey := ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	_, otherKey := ca.Issue(t, "other", x509.ExtKeyUsageClientAuth)
	caFile := ca.CAFile()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.pem")
	empty := filepath.Join(dir, "empty.pem")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))

	tests := []struct {
		name  string
		files TLSFiles
		role  TLSFileRole
		paths []string
	}{
		{name: "missing CA file", files: TLSFiles{CAFile: missing}, role: TLSCAFile, paths: []string{missing}},
		{name: "CA file without certificates", files: TLSFiles{CAFile: empty}, role: TLSCAFile, paths: []string{empty}},
		{name: "missing certificate", files: TLSFiles{CAFile: caFile, CertFile: missing, KeyFile: clientKey}, role: TLSCertFile, paths: []string{missing}},
		{name: "missing key", files: TLSFiles{CAFile: caFile, CertFile: clientCert, KeyFile: missing}, role: TLSKeyFile, paths: []string{missing}},
		{name: "key of another certificate", files: TLSFiles{CAFile: caFile, CertFile: clientCert, KeyFile: otherKey}, role: TLSKeyPair, paths: []string{clientCert, otherKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Config{Endpoints: []string{"https://127.0.0.1:1"}, TLS: &tc.files}.ClientConfig()
			var fe *TLSFileError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tc.role, fe.Role)
			require.Equal(t, tc.paths, fe.Paths)
		})
	}

	_, err := Config{}.ClientConfig()
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	cc, err := Config{Endpoints: []string{"https://127.0.0.1:1"}, TLS: &TLSFiles{CAFile: caFile, CertFile: clientCert, KeyFile: clientKey}}.ClientConfig()
	require.NoError(t, err)
	require.Equal(t, DefaultDialTimeout, cc.DialTimeout)
	require.NotNil(t, cc.TLS)
}

package etcdstore

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/embedetcd"
	"github.com/zlink-systems/zlink-etcd/location"
)

// testCA is a throw-away certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	ca := &testCA{cert: cert, key: key, dir: t.TempDir()}
	ca.write(t, "ca.pem", "CERTIFICATE", der)
	return ca
}

func (ca *testCA) write(t *testing.T, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(ca.dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

// issue writes a certificate and key for name (a loopback server or a
// client) and returns their paths.
func (ca *testCA) issue(t *testing.T, name string, serial int64, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return ca.write(t, name+".pem", "CERTIFICATE", der), ca.write(t, name+"-key.pem", "EC PRIVATE KEY", keyDER)
}

func TestDialTLS(t *testing.T) {
	ca := newTestCA(t)
	serverCert, serverKey := ca.issue(t, "server", 2, x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, "client", 3, x509.ExtKeyUsageClientAuth)
	caFile := filepath.Join(ca.dir, "ca.pem")
	m, err := embedetcd.StartMember(t.Context(), embedetcd.Config{TLS: &embedetcd.TLSFiles{
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
	ca := newTestCA(t)
	clientCert, clientKey := ca.issue(t, "client", 3, x509.ExtKeyUsageClientAuth)
	_, otherKey := ca.issue(t, "other", 4, x509.ExtKeyUsageClientAuth)
	caFile := filepath.Join(ca.dir, "ca.pem")
	missing := filepath.Join(ca.dir, "missing.pem")
	empty := filepath.Join(ca.dir, "empty.pem")
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

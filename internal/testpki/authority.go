// Package testpki makes throw-away certificate authorities for tests that
// run etcd with TLS: a CA and the server and client certificates it signs,
// written as PEM files into a temporary directory.
package testpki

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
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Authority is a throw-away CA. Safe for concurrent use.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string

	mu     sync.Mutex
	serial int64
}

// New makes a CA named name, valid for an hour either side of now, and
// writes its certificate to CAFile.
func New(t testing.TB, name string) *Authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	a := &Authority{cert: cert, key: key, dir: t.TempDir(), serial: 1}
	a.write(t, "ca.pem", "CERTIFICATE", der)
	return a
}

// CAFile is the path of the CA certificate.
func (a *Authority) CAFile() string { return filepath.Join(a.dir, "ca.pem") }

// Issue writes a certificate for commonName, valid for 127.0.0.1 and
// localhost with the given usage (server or client), and its key, and
// returns their paths.
func (a *Authority) Issue(t testing.TB, commonName string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	a.mu.Lock()
	a.serial++
	serial := a.serial
	a.mu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return a.write(t, commonName+".pem", "CERTIFICATE", der), a.write(t, commonName+"-key.pem", "EC PRIVATE KEY", keyDER)
}

// write writes one PEM block into the CA's directory and returns its path.
func (a *Authority) write(t testing.TB, name, kind string, der []byte) string {
	t.Helper()
	path := filepath.Join(a.dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
	return path
}

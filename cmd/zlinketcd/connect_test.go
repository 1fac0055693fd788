package main

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/testpki"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func TestUnreachableEndpoint(t *testing.T) {
	addr := closedPort(t)
	for _, cmd := range [][]string{{"inspect"}, {"gc"}, {"check"}, {"bench"}, {"demo"}} {
		t.Run(cmd[0], func(t *testing.T) {
			r := runCmd(t, append(cmd, "--endpoints", "http://"+addr, "--dial-timeout", "300ms")...)
			requireOneLineError(t, r, exitFailure, "zlinketcd: "+cmd[0]+": cannot reach etcd at http://"+addr+" within 300ms")
		})
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type testPKI struct {
	dir                                       string
	caFile, serverCert, serverKey             string
	clientCert, clientKey, otherCA, emptyFile string
}

// newTestPKI writes the files into temporary directories.
func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	ca := testpki.New(t, "test CA")
	p := testPKI{dir: t.TempDir(), caFile: ca.CAFile(), otherCA: testpki.New(t, "other CA").CAFile()}
	p.serverCert, p.serverKey = ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	p.emptyFile = filepath.Join(p.dir, "empty.pem")
	require.NoError(t, os.WriteFile(p.emptyFile, nil, 0o600))
	return p
}

func TestTLS(t *testing.T) {
	p := newTestPKI(t)
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{TLS: &etcdtest.TLSFiles{
		CertFile: p.serverCert, KeyFile: p.serverKey, TrustedCAFile: p.caFile, ClientCertAuth: true}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ep := m.Endpoints()[0]
	require.True(t, strings.HasPrefix(ep, "https://"), ep)
	plain := "http://" + strings.TrimPrefix(ep, "https://")
	quick := []string{"--dial-timeout", "500ms"}

	r := runCmd(t, "inspect", "leases", "--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert, "--key", p.clientKey)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "OWNER LEASES (0)")

	tests := []struct {
		name      string
		args      []string
		fragments []string
	}{
		{name: "missing CA file", args: []string{"--endpoints", ep, "--cacert", filepath.Join(p.dir, "nope.pem")},
			fragments: []string{"tls: --cacert " + filepath.Join(p.dir, "nope.pem") + ": no such file or directory"}},
		{name: "missing key file", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert, "--key", filepath.Join(p.dir, "nope.pem")},
			fragments: []string{"tls: --key", "no such file or directory"}},
		{name: "CA file without certificates", args: []string{"--endpoints", ep, "--cacert", p.emptyFile}, fragments: []string{"tls: --cacert " + p.emptyFile}},
		{name: "key does not match certificate", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert, "--key", p.serverKey},
			fragments: []string{"tls:", "private key does not match public key"}},
		{name: "wrong CA", args: append([]string{"--endpoints", ep, "--cacert", p.otherCA, "--cert", p.clientCert, "--key", p.clientKey}, quick...),
			fragments: []string{"cannot reach etcd at " + ep, "--cacert/--cert/--key"}},
		{name: "no client certificate", args: append([]string{"--endpoints", ep, "--cacert", p.caFile}, quick...),
			fragments: []string{"cannot reach etcd at " + ep}},
		{name: "plain http to a TLS member", args: append([]string{"--endpoints", plain}, quick...),
			fragments: []string{"cannot reach etcd at " + plain, "a TLS cluster needs https:// endpoints and --cacert"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"inspect"}, tc.args...)...)
			requireOneLineError(t, r, exitFailure, tc.fragments...)
		})
	}
}

func TestAuth(t *testing.T) {
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ep := m.Endpoints()[0]
	root, err := clientv3.New(clientv3.Config{Endpoints: m.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	ctx := t.Context()
	_, err = root.UserAdd(ctx, "root", "rootpw")
	require.NoError(t, err)
	_, err = root.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	_, err = root.RoleAdd(ctx, "zlink")
	require.NoError(t, err)
	_, err = root.RoleGrantPermission(ctx, "zlink", "/zlink/", clientv3.GetPrefixRangeEnd("/zlink/"), clientv3.PermissionType(clientv3.PermReadWrite))
	require.NoError(t, err)
	_, err = root.UserAdd(ctx, "alice", "alicepw")
	require.NoError(t, err)
	_, err = root.UserGrantRole(ctx, "alice", "zlink")
	require.NoError(t, err)
	_, err = root.AuthEnable(ctx)
	require.NoError(t, err)
	require.NoError(t, root.Close())

	// A user limited to /zlink/ runs the demo (under a scratch prefix
	// inside its range), inspect and gc.
	r := runCmd(t, "demo", "--endpoints", ep, "--user", "alice:alicepw", "--nodes", "3", "--actors", "1", "--quick")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	r = runCmd(t, "inspect", "--endpoints", ep, "--user", "alice", "--password", "alicepw")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCmd(t, "gc", "--endpoints", ep, "--user", "alice:alicepw")
	require.Equal(t, exitOK, r.code, r.stderr)

	tests := []struct {
		name      string
		args      []string
		fragments []string
	}{
		{name: "wrong password", args: []string{"--user", "alice:nope"}, fragments: []string{"authentication failed: wrong user name or password"}},
		{name: "unknown user", args: []string{"--user", "mallory:pw"}, fragments: []string{"authentication failed"}},
		{name: "no user", args: nil, fragments: []string{"requires authentication: pass --user"}},
		{name: "prefix outside the role", args: []string{"--user", "alice:alicepw", "--prefix", "/other/"}, fragments: []string{"permission denied"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, append([]string{"inspect", "--endpoints", ep}, tc.args...)...)
			requireOneLineError(t, r, exitFailure, tc.fragments...)
		})
	}
}

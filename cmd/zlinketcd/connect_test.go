package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/testpki"
	"github.com/zlink-systems/zlink-etcd/location"
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

// Endpoints that refuse connections are reported at once, not after the
// dial timeout.
func TestUnreachableEndpoint(t *testing.T) {
	addr := closedPort(t)
	const dialTimeout = 20 * time.Second
	for _, cmd := range [][]string{{"inspect"}, {"gc"}, {"check"}, {"bench"}, {"demo"}, {"auth", "setup"}} {
		t.Run(cmd[0], func(t *testing.T) {
			began := time.Now()
			r := runCmd(t, append(cmd, "--endpoints", "http://"+addr+",http://"+addr, "--dial-timeout", dialTimeout.String())...)
			requireOneLineError(t, r, exitFailure, "zlinketcd: "+cmd[0]+": cannot reach etcd at http://"+addr+",http://"+addr+": connection refused")
			require.Less(t, time.Since(began), dialTimeout/2, "a refused connection is not waited on")
		})
	}
}

// testPKI is a CA with a server certificate for 127.0.0.1 and localhost
// and client certificates, and another CA with a client certificate,
// written as PEM files.
type testPKI struct {
	dir                                       string
	caFile, serverCert, serverKey             string
	clientCert, clientKey, otherCA, emptyFile string
	// otherClientCert and otherClientKey are signed by the other CA.
	otherClientCert, otherClientKey string
	ca                              *testpki.Authority
}

// newTestPKI writes the files into temporary directories.
func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	ca := testpki.New(t, "test CA")
	other := testpki.New(t, "other CA")
	p := testPKI{dir: t.TempDir(), caFile: ca.CAFile(), otherCA: other.CAFile(), ca: ca}
	p.serverCert, p.serverKey = ca.Issue(t, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = ca.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	p.otherClientCert, p.otherClientKey = other.Issue(t, "client", x509.ExtKeyUsageClientAuth)
	p.emptyFile = filepath.Join(p.dir, "empty.pem")
	require.NoError(t, os.WriteFile(p.emptyFile, nil, 0o600))
	return p
}

// startTLSMember starts a member that serves TLS and requires client
// certificates signed by p's CA.
func startTLSMember(t *testing.T, p testPKI) *etcdtest.Member {
	t.Helper()
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{TLS: &etcdtest.TLSFiles{
		CertFile: p.serverCert, KeyFile: p.serverKey, TrustedCAFile: p.caFile, ClientCertAuth: true}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// Each TLS mismatch is named by its cause, at once (a probe tells it long
// before the dial timeout runs out), and --server-name is checked.
func TestTLS(t *testing.T) {
	p := newTestPKI(t)
	m := startTLSMember(t, p)
	ep := m.Endpoints()[0]
	require.True(t, strings.HasPrefix(ep, "https://"), ep)
	plain := "http://" + strings.TrimPrefix(ep, "https://")
	sharedPlain := strings.Replace(sharedEndpoints(t), "http://", "https://", 1)

	for _, ok := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{name: "flags", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert, "--key", p.clientKey}},
		{name: "etcdctl environment", env: map[string]string{"ETCDCTL_ENDPOINTS": ep, "ETCDCTL_CACERT": p.caFile,
			"ETCDCTL_CERT": p.clientCert, "ETCDCTL_KEY": p.clientKey}},
		{name: "server name the certificate carries", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert,
			"--key", p.clientKey, "--server-name", "localhost"}},
		{name: "insecure skip verify", args: []string{"--endpoints", ep, "--cert", p.clientCert, "--key", p.clientKey},
			env: map[string]string{"ETCDCTL_INSECURE_SKIP_TLS_VERIFY": "true"}},
	} {
		t.Run(ok.name, func(t *testing.T) {
			r := runWith(t, runOptions{args: append([]string{"inspect", "leases"}, ok.args...), env: ok.env})
			require.Equal(t, exitOK, r.code, r.stderr)
			require.Contains(t, r.stdout, "OWNER LEASES (0)")
		})
	}

	const dialTimeout = 20 * time.Second
	slow := []string{"--dial-timeout", dialTimeout.String()}
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
		// The five causes a client that only sees "cannot connect" cannot tell apart.
		{name: "wrong CA", args: []string{"--endpoints", ep, "--cacert", p.otherCA, "--cert", p.clientCert, "--key", p.clientKey},
			fragments: []string{ep + ": the server certificate is not signed by a CA in --cacert " + p.otherCA + " (x509: certificate signed by unknown authority"}},
		{name: "no --cacert", args: []string{"--endpoints", ep, "--cert", p.clientCert, "--key", p.clientKey},
			fragments: []string{ep + ": no --cacert given, and the system's roots do not trust the server certificate (x509: certificate signed by unknown authority",
				"give the cluster's CA with --cacert"}},
		{name: "no client certificate", args: []string{"--endpoints", ep, "--cacert", p.caFile},
			fragments: []string{ep + " requires a client certificate (remote error: tls: certificate required): give --cert and --key"}},
		{name: "client certificate of another CA", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.otherClientCert, "--key", p.otherClientKey},
			fragments: []string{ep + " rejected the client certificate --cert " + p.otherClientCert + " (remote error: tls: unknown certificate authority)", "signed by a CA the cluster trusts"}},
		{name: "plain http to a TLS member", args: []string{"--endpoints", plain},
			fragments: []string{plain + " is a TLS port: use https://"}},
		{name: "https to a plain member", args: []string{"--endpoints", sharedPlain, "--cacert", p.caFile},
			fragments: []string{sharedPlain + " does not speak TLS", "use http://"}},
		{name: "server name the certificate lacks", args: []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", p.clientCert, "--key", p.clientKey,
			"--server-name", "wrong.example"},
			fragments: []string{"the server certificate does not carry --server-name wrong.example (x509: certificate is valid for localhost, not wrong.example)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			r := runCmd(t, append(append([]string{"inspect"}, tc.args...), slow...)...)
			requireOneLineError(t, r, exitFailure, tc.fragments...)
			require.Less(t, time.Since(began), dialTimeout/2, "the cause is named before the dial timeout")
		})
	}
}

// --server-name is the name the client sends as SNI (and verifies): gRPC
// would otherwise send the endpoint's host.
func TestServerNameIsSNI(t *testing.T) {
	p := newTestPKI(t)
	cert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	require.NoError(t, err)
	names := make(chan string, 16)
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		select {
		case names <- h.ServerName:
		default:
		}
		return nil, nil
	}, Certificates: []tls.Certificate{cert}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				_ = c.Close()
			}()
		}
	}()
	cc, err := etcdstore.Config{Endpoints: []string{"https://" + l.Addr().String()},
		TLS: &etcdstore.TLSFiles{CAFile: p.caFile, ServerName: "localhost"}}.ClientConfig()
	require.NoError(t, err)
	c, err := clientv3.New(cc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, _ = c.Get(ctx, "k")
	select {
	case name := <-names:
		require.Equal(t, "localhost", name)
	case <-time.After(10 * time.Second):
		t.Fatal("the client never said hello")
	}
}

// authMember starts a member with authentication: root, the role zlink
// with readwrite on /zlink/, the user alice with it, the role reader with
// read on /zlink/ and the user bob with that.
func authMember(t *testing.T) string {
	t.Helper()
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	root, err := clientv3.New(clientv3.Config{Endpoints: m.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	ctx := t.Context()
	_, err = root.UserAdd(ctx, "root", "rootpw")
	require.NoError(t, err)
	_, err = root.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	for _, u := range []struct {
		role, user, password string
		perm                 clientv3.PermissionType
	}{
		{role: "zlink", user: "alice", password: "alicepw", perm: clientv3.PermissionType(clientv3.PermReadWrite)},
		{role: "reader", user: "bob", password: "bobpw", perm: clientv3.PermissionType(clientv3.PermRead)},
	} {
		_, err = root.RoleAdd(ctx, u.role)
		require.NoError(t, err)
		_, err = root.RoleGrantPermission(ctx, u.role, "/zlink/", clientv3.GetPrefixRangeEnd("/zlink/"), u.perm)
		require.NoError(t, err)
		_, err = root.UserAdd(ctx, u.user, u.password)
		require.NoError(t, err)
		_, err = root.UserGrantRole(ctx, u.user, u.role)
		require.NoError(t, err)
	}
	_, err = root.AuthEnable(ctx)
	require.NoError(t, err)
	require.NoError(t, root.Close())
	return m.Endpoints()[0]
}

func TestAuth(t *testing.T) {
	ep := authMember(t)

	// A user limited to /zlink/ runs the demo (under a scratch prefix
	// inside its range), inspect and gc.
	r := runCmd(t, "demo", "--endpoints", ep, "--user", "alice:alicepw", "--nodes", "3", "--actors", "1", "--quick")
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	r = runCmd(t, "inspect", "--endpoints", ep, "--user", "alice", "--password", "alicepw")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runCmd(t, "gc", "--apply", "--endpoints", ep, "--user", "alice:alicepw")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = runWith(t, runOptions{args: []string{"inspect", "--endpoints", ep}, env: map[string]string{"ETCDCTL_USER": "alice", "ETCDCTL_PASSWORD": "alicepw"}})
	require.Equal(t, exitOK, r.code, "ETCDCTL_USER and ETCDCTL_PASSWORD: %s", r.stderr)
	r = runWith(t, runOptions{args: []string{"inspect", "--endpoints", ep}, env: map[string]string{"ETCDCTL_USER": "alice:alicepw"}})
	require.Equal(t, exitOK, r.code, "ETCDCTL_USER name:password: %s", r.stderr)

	tests := []struct {
		name      string
		args      []string
		fragments []string
	}{
		{name: "wrong password", args: []string{"inspect", "--user", "alice:nope"}, fragments: []string{`authentication failed for etcd user "alice": wrong user name or password`}},
		{name: "unknown user", args: []string{"inspect", "--user", "mallory:pw"}, fragments: []string{`authentication failed for etcd user "mallory"`}},
		{name: "no user", args: []string{"inspect"}, fragments: []string{"the cluster requires authentication: pass --user"}},
		{name: "prefix outside the role", args: []string{"inspect", "--user", "alice:alicepw", "--prefix", "/other/"},
			fragments: []string{`permission denied: etcd user "alice" may not read the prefix /other/ (its role needs: etcdctl role grant-permission ROLE --prefix=true read /other/)`}},
	}
	// A user that may only read passes the preflight of the commands that
	// only read and fails that of every command that writes.
	for _, cmd := range [][]string{{"gc", "--apply"}, {"check"}, {"bench"}, {"demo"}} {
		tests = append(tests, struct {
			name      string
			args      []string
			fragments []string
		}{name: "read-only user: " + strings.Join(cmd, " "), args: append(cmd, "--user", "bob:bobpw"),
			fragments: []string{`permission denied: etcd user "bob" may not write the prefix /zlink/v1/ (its role needs: etcdctl role grant-permission ROLE --prefix=true readwrite /zlink/v1/)`}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, append(tc.args, "--endpoints", ep)...)
			requireOneLineError(t, r, exitFailure, tc.fragments...)
			require.Empty(t, r.stdout, "the preflight fails before anything runs")
		})
	}
	for _, cmd := range [][]string{{"inspect"}, {"gc"}} {
		r := runCmd(t, append(cmd, "--endpoints", ep, "--user", "bob:bobpw")...)
		require.Equal(t, exitOK, r.code, "%s: %s", cmd, r.stderr)
	}
}

// auth setup on a TLS cluster as root by certificate: it creates the
// role, the certificate-only user and root, and enables auth; a second run
// changes nothing; the store's user then works under its prefix and
// nowhere else; no key material is ever printed.
func TestAuthSetupCertificates(t *testing.T) {
	p := newTestPKI(t)
	m := startTLSMember(t, p)
	ep := m.Endpoints()[0]
	rootCert, rootKey := p.ca.Issue(t, "root", x509.ExtKeyUsageClientAuth)
	zlinkCert, zlinkKey := p.ca.Issue(t, "zlink", x509.ExtKeyUsageClientAuth)
	asRoot := []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", rootCert, "--key", rootKey}
	asZlink := []string{"--endpoints", ep, "--cacert", p.caFile, "--cert", zlinkCert, "--key", zlinkKey}
	// transcript is auth setup's output: the head line, one indented line
	// per step, the summary.
	transcript := func(steps ...string) string {
		return "auth setup: on " + ep + " as root (the CommonName of --cert " + rootCert + ")\n" +
			"  " + strings.Join(steps, "\n  ") + "\n" +
			"auth setup: done: user zlink (certificate-only) has role zlink with readwrite on /zlink/v1/\n"
	}

	first := runCmd(t, append([]string{"auth", "setup"}, asRoot...)...)
	require.Equal(t, exitOK, first.code, first.stderr)
	require.Equal(t, transcript("role zlink: created", "role zlink: readwrite on prefix /zlink/v1/: granted",
		"user zlink: created, certificate-only: no password, it authenticates with a client certificate whose CommonName is zlink",
		"user zlink: role zlink: granted",
		"user root: created, certificate-only: no password, it authenticates with a client certificate whose CommonName is root",
		"user root: role root: granted", "authentication: enabled"), first.stdout)
	require.Empty(t, first.stderr)

	second := runCmd(t, append([]string{"auth", "setup"}, asRoot...)...)
	require.Equal(t, exitOK, second.code, second.stderr)
	require.Equal(t, transcript("role zlink: exists", "role zlink: readwrite on prefix /zlink/v1/: already granted",
		"user zlink: exists", "user zlink: role zlink: already granted", "authentication: already enabled"),
		second.stdout, "a second run changes nothing")

	keyPEM, err := os.ReadFile(rootKey)
	require.NoError(t, err)
	for _, out := range []string{first.stdout, first.stderr, second.stdout, second.stderr} {
		require.NotContains(t, out, "PRIVATE KEY")
		for _, line := range strings.Split(string(keyPEM), "\n") {
			if line != "" && !strings.HasPrefix(line, "-----") {
				require.NotContains(t, out, line, "key material")
			}
		}
	}

	// The store's user works under its prefix, writes included…
	r := runCmd(t, append([]string{"check", "--run", "^(LS-00[1-3]|AUTH-001)_"}, asZlink...)...)
	require.Equal(t, exitOK, r.code, "%s\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "check: PASS (4 passed, 0 skipped)")
	r = runCmd(t, append([]string{"gc", "--apply"}, asZlink...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	// …and nowhere else.
	r = runCmd(t, append([]string{"inspect", "--prefix", "/other/"}, asZlink...)...)
	requireOneLineError(t, r, exitFailure, `permission denied: etcd user "zlink" (the CommonName of --cert `+zlinkCert+`) may not read the prefix /other/`)
	cc, err := etcdstore.Config{Endpoints: []string{ep}, TLS: &etcdstore.TLSFiles{CAFile: p.caFile, CertFile: zlinkCert, KeyFile: zlinkKey}}.ClientConfig()
	require.NoError(t, err)
	c, err := clientv3.New(cc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Put(t.Context(), "/zlink/v1/probe", "v")
	require.NoError(t, err)
	for _, key := range []string{"/zlink/v10", "/zlink/", "/other/k", "/zlink/v2/k"} {
		_, err = c.Put(t.Context(), key, "v")
		require.ErrorIs(t, err, rpctypes.ErrPermissionDenied, key)
	}
	_, err = c.Get(t.Context(), "/", clientv3.WithPrefix())
	require.ErrorIs(t, err, rpctypes.ErrPermissionDenied)

	// Only root sets auth up.
	r = runCmd(t, append([]string{"auth", "setup"}, asZlink...)...)
	requireOneLineError(t, r, exitFailure, "authentication is enabled and auth setup needs etcd's root user, not zlink (the CommonName of --cert "+zlinkCert+")")

	// Another tenant: its own role, user and prefix.
	r = runCmd(t, append([]string{"auth", "setup", "--role", "tenant-b", "--user", "tenant-b", "--prefix", "/tenants/b/zlink/v1/"}, asRoot...)...)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "  role tenant-b: created\n  role tenant-b: readwrite on prefix /tenants/b/zlink/v1/: granted\n")
	require.Contains(t, r.stdout, "  user tenant-b: created, certificate-only")
	require.Contains(t, r.stdout, "  authentication: already enabled\n")
}

// auth setup as root with a password (from the environment, as a
// Kubernetes Job passes a Secret): root is created with it, and neither
// the output nor the debug logs ever show it.
func TestAuthSetupPassword(t *testing.T) {
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	ep := m.Endpoints()[0]
	var b [12]byte
	_, err = rand.Read(b[:])
	require.NoError(t, err)
	secret := "pw-" + hex.EncodeToString(b[:])
	env := map[string]string{"ETCDCTL_ENDPOINTS": ep, "ETCDCTL_USER": "root", "ETCDCTL_PASSWORD": secret}

	var outputs []string
	r := runWith(t, runOptions{args: []string{"auth", "setup", "--log-level", "debug"}, env: env})
	outputs = append(outputs, r.stdout, r.stderr)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "auth setup: on "+ep+" as root\n")
	require.Contains(t, r.stdout, "  user root: created, with the password auth setup authenticated with\n")
	require.Contains(t, r.stdout, "  authentication: enabled\n")

	r = runWith(t, runOptions{args: []string{"auth", "setup", "--log-level", "debug"}, env: env})
	outputs = append(outputs, r.stdout, r.stderr)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "  authentication: already enabled\n")
	require.NotContains(t, r.stdout, "created")

	// --user before the subcommand is the connection's; after it, the
	// user to create.
	r = runCmd(t, "--user", "root:"+secret, "auth", "setup", "--user", "other", "--endpoints", ep)
	outputs = append(outputs, r.stdout, r.stderr)
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "  user other: created, certificate-only")

	r = runWith(t, runOptions{args: []string{"auth", "setup"}, env: map[string]string{"ETCDCTL_ENDPOINTS": ep, "ETCDCTL_USER": "root", "ETCDCTL_PASSWORD": "wrong"}})
	outputs = append(outputs, r.stdout, r.stderr)
	requireOneLineError(t, r, exitFailure, `authentication failed for etcd user "root"`)

	for _, out := range outputs {
		require.NotContains(t, out, secret)
	}
}

// Before auth is on, auth setup refuses to turn it on for a caller that
// is not root: nobody could administer the cluster afterwards.
func TestAuthSetupNeedsRoot(t *testing.T) {
	_, c, _, eps := sharedStore(t)
	r := runCmd(t, "auth", "setup", "--endpoints", eps, "--role", "x", "--user", "y")
	requireOneLineError(t, r, exitFailure, "auth setup enables authentication only as etcd's root user, not nobody (no --user and no client certificate)")
	st, err := c.AuthStatus(t.Context())
	require.NoError(t, err)
	require.False(t, st.Enabled)
	_, err = c.RoleGet(t.Context(), "x")
	require.ErrorIs(t, err, rpctypes.ErrRoleNotFound, "nothing was created")
}

// refusingKV refuses every read and transaction, as etcd refuses a user
// without permission.
type refusingKV struct{ clientv3.KV }

// Get implements clientv3.KV.
func (refusingKV) Get(context.Context, string, ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	return nil, rpctypes.ErrGRPCPermissionDenied
}

// Txn implements clientv3.KV.
func (k refusingKV) Txn(ctx context.Context) clientv3.Txn { return refusingTxn{k.KV.Txn(ctx)} }

// refusingTxn refuses to commit.
type refusingTxn struct{ clientv3.Txn }

// If implements clientv3.Txn.
func (t refusingTxn) If(cs ...clientv3.Cmp) clientv3.Txn { return refusingTxn{t.Txn.If(cs...)} }

// Then implements clientv3.Txn.
func (t refusingTxn) Then(ops ...clientv3.Op) clientv3.Txn { return refusingTxn{t.Txn.Then(ops...)} }

// Else implements clientv3.Txn.
func (t refusingTxn) Else(ops ...clientv3.Op) clientv3.Txn { return refusingTxn{t.Txn.Else(ops...)} }

// Commit implements clientv3.Txn.
func (refusingTxn) Commit() (*clientv3.TxnResponse, error) {
	return nil, rpctypes.ErrGRPCPermissionDenied
}

// Each layer says its prefix once: the store names the operation once
// (txn names it too), and the command does not repeat its name when a
// package of the same name said it.
func TestNoDoubledPrefixes(t *testing.T) {
	c := etcdtest.Connect(t)
	s, err := etcdstore.New(c, etcdstore.Options{Root: etcdtest.UniquePrefix(t), KV: refusingKV{KV: c.KV}})
	require.NoError(t, err)
	ctx := t.Context()
	key, err := location.EncodeAuthorityKey(location.ObjectActor, "a")
	require.NoError(t, err)
	rid := location.RoutingID("n")
	calls := map[string]func() error{
		"UpdateActor": func() error {
			_, err := s.UpdateActor(ctx, location.ActorLocation{MeshName: "m", ActorID: "a", ActorType: "t",
				ActorRef:     location.ActorRef{ActorID: "a", ObjectGeneration: 1, MeshName: "m", NodeRID: rid},
				OwnerNodeRID: rid, OwnerNodeGeneration: 1, SpotKind: location.SpotEntry, SpotID: "e", SpotGeneration: 1,
				MembershipEpoch: 1, OwnerID: "o", LeaseGeneration: 1}, location.IntentNewClaim)
			return err
		},
		"ReadAuthority": func() error { _, err := s.ReadAuthority(ctx, key); return err },
		"CollectGarbage": func() error {
			_, err := s.CollectGarbage(ctx, etcdstore.GCOptions{DryRun: true, ReservationTerminalAge: time.Hour})
			return err
		},
	}
	for op, f := range calls {
		t.Run(op, func(t *testing.T) {
			err := f()
			require.ErrorIs(t, err, location.ErrUnavailable)
			require.True(t, strings.HasPrefix(err.Error(), "etcdstore: "+op+": "), err.Error())
			require.Equal(t, 1, strings.Count(err.Error(), op+": "), err.Error())
			requireNoDoubledPrefix(t, err.Error())
		})
	}

	var out strings.Builder
	require.Equal(t, exitFailure, fail(&out, "bench", errors.New("bench: set up client 0: etcdstore: UpdateActor: store unavailable")))
	require.Equal(t, "zlinketcd: bench: set up client 0: etcdstore: UpdateActor: store unavailable\n", out.String())
	out.Reset()
	fail(&out, "inspect", errors.New("inspect: read /x/owner/: etcdserver: no"))
	require.Equal(t, "zlinketcd: inspect: read /x/owner/: etcdserver: no\n", out.String())
}

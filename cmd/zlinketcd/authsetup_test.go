package main

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
)

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
	head := "auth setup: on " + ep + " as root (the CommonName of --cert " + rootCert + ")\n"
	done := "auth setup: done: user zlink (certificate-only) has role zlink with readwrite on /zlink/v1/\n"

	first := runCmd(t, append([]string{"auth", "setup"}, asRoot...)...)
	require.Equal(t, exitOK, first.code, first.stderr)
	require.Equal(t, head+
		"  role zlink: created\n"+
		"  role zlink: readwrite on prefix /zlink/v1/: granted\n"+
		"  user zlink: created, certificate-only: no password, it authenticates with a client certificate whose CommonName is zlink\n"+
		"  user zlink: role zlink: granted\n"+
		"  user root: created, certificate-only: no password, it authenticates with a client certificate whose CommonName is root\n"+
		"  user root: role root: granted\n"+
		"  authentication: enabled\n"+done, first.stdout)
	require.Empty(t, first.stderr)

	second := runCmd(t, append([]string{"auth", "setup"}, asRoot...)...)
	require.Equal(t, exitOK, second.code, second.stderr)
	require.Equal(t, head+
		"  role zlink: exists\n"+
		"  role zlink: readwrite on prefix /zlink/v1/: already granted\n"+
		"  user zlink: exists\n"+
		"  user zlink: role zlink: already granted\n"+
		"  authentication: already enabled\n"+done, second.stdout, "a second run changes nothing")

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

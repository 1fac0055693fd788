package etcdstore

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/storetest"
	"github.com/zlink-systems/zlink-etcd/internal/testpki"
	"github.com/zlink-systems/zlink-etcd/location"
)

func TestDial(t *testing.T) {
	eps := strings.Split(os.Getenv(etcdtest.EnvSharedEndpoints), ",")
	require.NotEmpty(t, eps[0], "the shared member runs")
	s, err := Dial(t.Context(), Config{Endpoints: eps, Options: Options{Root: etcdtest.UniquePrefix(t)}})
	require.NoError(t, err)
	storetest.Claim(t, t.Context(), s, "a", time.Minute)
	require.NoError(t, s.Close())

	_, err = Dial(t.Context(), Config{})
	require.ErrorIs(t, err, location.ErrInvalidArgument)

	_, err = Dial(t.Context(), Config{Endpoints: []string{"http://127.0.0.1:1"}, DialTimeout: 200 * time.Millisecond})
	require.ErrorIs(t, err, location.ErrUnavailable)
}

// Credentials never show in text or logs.
func TestConfigHidesThePassword(t *testing.T) {
	cfg := Config{Endpoints: []string{"https://etcd:2379"}, Username: "zlink", Password: "s3cret", TLS: &TLSFiles{CAFile: "ca.pem"}}
	require.Equal(t, "etcd https://etcd:2379 tls user zlink", cfg.String())
	require.NotContains(t, fmt.Sprintf("%v %+v %s %#v", cfg, cfg, cfg, cfg), "s3cret")
	var b strings.Builder
	slog.New(slog.NewTextHandler(&b, nil)).Info("dial", "config", cfg)
	require.NotContains(t, b.String(), "s3cret")
	require.Contains(t, b.String(), "config.user=zlink")
}

// A user allowed only the store's prefix can run the store (least
// privilege): the store touches no key outside its root.
func TestDialWithAuthentication(t *testing.T) {
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	admin, err := m.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	ctx := t.Context()
	const root = "/tenant/zlink/v1/"
	for _, step := range []func() error{
		func() error { _, err := admin.RoleAdd(ctx, "root"); return err },
		func() error { _, err := admin.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "zlink"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "zlink", root, clientv3.GetPrefixRangeEnd(root), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "zlink", "zlinkpw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "zlink", "zlink"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	} {
		require.NoError(t, step())
	}

	s, err := Dial(ctx, Config{Endpoints: m.Endpoints(), Username: "zlink", Password: "zlinkpw", Options: Options{Root: root}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	a, err := s.ClaimOwnerLease(ctx, "a", time.Minute)
	require.NoError(t, err)
	storedIn(t)(s.UpdateSpot(ctx, spot("s1", a.Token), location.IntentNewClaim))
	removed, err := s.RemoveAllByOwner(ctx, a.Token)
	require.NoError(t, err)
	require.Equal(t, int64(1), removed)
	kind, err := s.ReleaseOwnerLease(ctx, a.Token)
	require.NoError(t, err)
	require.Equal(t, location.KindReleased, kind)

	_, err = Dial(ctx, Config{Endpoints: m.Endpoints(), Username: "zlink", Password: "wrong", DialTimeout: time.Second})
	require.Error(t, err)
}

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
	storetest.Claim(t, t.Context(), s, "a", time.Minute)
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

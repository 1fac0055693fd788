package integration

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/zlink-systems/zlink-etcd/clock"
	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/internal/syncio"
	"github.com/zlink-systems/zlink-etcd/internal/testpki"
	"github.com/zlink-systems/zlink-etcd/location"
)

// The least-privilege deployment of docs/deployment.md: TLS with client
// certificates, etcd auth on, and one user per store whose role grants
// read/write on the store's root prefix and nothing else.

const (
	rootA = "/tenants/a/zlink/v1/"
	rootB = "/tenants/b/zlink/v1/"
	// The passwords must never show up in a log line or an error.
	rootPassword = "root-pw-4c1e7d0b"
	userBPass    = "b-pw-9a61f3e2"
	wrongPass    = "wrong-pw-0d5b8c77"
)

// logBuffer is a slog destination the test can search.
type logBuffer struct{ syncio.Buffer }

// logger logs everything, debug included, as text into l.
func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// securedMember is a TLS member with client-certificate authentication and
// etcd auth enabled: users root, zlink-a (certificate only, role zlink-a:
// read/write on rootA) and zlink-b (password, role zlink-b: read/write on
// rootB).
type securedMember struct {
	m                 *etcdtest.Member
	ca                *testpki.Authority
	rootCert, rootKey string
	aCert, aKey       string
	bCert, bKey       string
}

// startSecuredMember starts the member and sets up its users and roles.
func startSecuredMember(t *testing.T) *securedMember {
	t.Helper()
	ca := testpki.New(t, "zlink-test-ca")
	serverCert, serverKey := ca.Issue(t, "etcd-server", x509.ExtKeyUsageServerAuth)
	s := &securedMember{ca: ca}
	s.rootCert, s.rootKey = ca.Issue(t, "root", x509.ExtKeyUsageClientAuth)
	s.aCert, s.aKey = ca.Issue(t, "zlink-a", x509.ExtKeyUsageClientAuth)
	// B's certificate names no etcd user: B authenticates with its password.
	s.bCert, s.bKey = ca.Issue(t, "zlink-b-client", x509.ExtKeyUsageClientAuth)
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{TLS: &etcdtest.TLSFiles{
		CertFile: serverCert, KeyFile: serverKey, TrustedCAFile: ca.CAFile(), ClientCertAuth: true}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	s.m = m

	admin := s.client(t, s.rootCert, s.rootKey, "", "")
	ctx := t.Context()
	_, err = admin.UserAdd(ctx, "root", rootPassword)
	require.NoError(t, err)
	_, err = admin.UserGrantRole(ctx, "root", "root")
	require.NoError(t, err)
	for _, u := range []struct{ user, root, password string }{{"zlink-a", rootA, ""}, {"zlink-b", rootB, userBPass}} {
		_, err = admin.RoleAdd(ctx, u.user)
		require.NoError(t, err)
		_, err = admin.RoleGrantPermission(ctx, u.user, u.root, clientv3.GetPrefixRangeEnd(u.root), clientv3.PermissionType(clientv3.PermReadWrite))
		require.NoError(t, err)
		_, err = admin.UserAddWithOptions(ctx, u.user, u.password, &clientv3.UserAddOptions{NoPassword: u.password == ""})
		require.NoError(t, err)
		_, err = admin.UserGrantRole(ctx, u.user, u.user)
		require.NoError(t, err)
	}
	_, err = admin.AuthEnable(ctx)
	require.NoError(t, err)
	return s
}

// client dials the member with a certificate (and a user, if given).
func (s *securedMember) client(t *testing.T, cert, key, user, password string) *clientv3.Client {
	t.Helper()
	tlsConfig, err := transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: s.ca.CAFile()}.ClientConfig()
	require.NoError(t, err)
	c, err := clientv3.New(clientv3.Config{Endpoints: s.m.Endpoints(), TLS: tlsConfig, DialTimeout: 5 * time.Second,
		Username: user, Password: password, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// config is the etcdstore configuration of a tenant.
func (s *securedMember) config(cert, key, user, password, root string, logs *logBuffer) etcdstore.Config {
	return etcdstore.Config{Endpoints: s.m.Endpoints(), DialTimeout: 3 * time.Second,
		TLS:      &etcdstore.TLSFiles{CertFile: cert, KeyFile: key, CAFile: s.ca.CAFile()},
		Username: user, Password: password,
		Options: etcdstore.Options{Root: root, Logger: logs.logger()}}
}

// leastPrivilegeHarness runs the conformance suite's fixtures as user
// zlink-a: every fixture is a store under its own random sub-prefix of
// rootA, on one client that authenticates with zlink-a's certificate.
func leastPrivilegeHarness(client *clientv3.Client, logs *logBuffer) conformance.Harness {
	return conformance.Harness{
		Name: "least-privilege",
		NewFixture: func(t conformance.TB) conformance.Fixture {
			var b [6]byte
			if _, err := rand.Read(b[:]); err != nil {
				t.Fatalf("random: %v", err)
			}
			root := fmt.Sprintf("%sfixture-%s/", rootA, hex.EncodeToString(b[:]))
			clk := clock.NewManual(conformance.T0())
			s, err := etcdstore.New(client, etcdstore.Options{Root: root, Clock: clk.Now, MinLeaseSeconds: 600, Logger: logs.logger()})
			if err != nil {
				t.Fatalf("etcdstore: %v", err)
			}
			return conformance.Fixture{Store: s, Clock: clk, ExpireOwnerLease: s.ExpireOwnerLease}
		},
		Capabilities: conformance.Capabilities{MeshNodeChangeStamp: true},
	}
}

func TestLeastPrivilege(t *testing.T) {
	sm := startSecuredMember(t)
	ctx := t.Context()
	logs := &logBuffer{}
	var errs []error
	keep := func(err error) error {
		if err != nil {
			errs = append(errs, err)
		}
		return err
	}

	t.Run("a store works with read/write on its root prefix only", func(t *testing.T) {
		client := sm.client(t, sm.aCert, sm.aKey, "", "")
		opts := conformance.RandomOptions{Seed: 1, Sequences: 25, IgnoreEnv: true, Package: "./integration"}
		if stressBuild {
			opts.Sequences = 400
		}
		rep := conformance.RunRandom(t, leastPrivilegeHarness(client, logs), opts)
		require.True(t, rep.OK())
		if stressBuild {
			// The whole scenario catalogue, as this user.
			conformance.Run(t, leastPrivilegeHarness(client, logs))
		}

		// What the random tester does not reach: Dial, watches, the
		// garbage collector, the mesh-node change stamp.
		a, err := etcdstore.Dial(ctx, sm.config(sm.aCert, sm.aKey, "", "", rootA, logs))
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close()) }()
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		changes, err := a.WatchChanges(wctx, location.TableSpots)
		require.NoError(t, err)
		claim, err := a.ClaimOwnerLease(ctx, "node-a", time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.KindClaimed, claim.Kind)
		w, err := a.UpdateSpot(ctx, spotRow("s1", claim.Token, "n1"), location.IntentNewClaim)
		require.NoError(t, err)
		require.Equal(t, location.Stored, w.Status)
		select {
		case <-changes:
		case <-time.After(10 * time.Second):
			t.Fatal("no change notification")
		}
		_, ok, err := a.GetMeshNodeChangeStamp(ctx, workloadMesh)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, a.ExpireOwnerLease(ctx, "node-a"))
		gc, err := a.CollectGarbage(ctx, etcdstore.GCOptions{})
		require.NoError(t, err)
		require.Equal(t, []string{"node-a"}, gc.DeadOwners)
		got, err := a.ResolveSpot(ctx, location.SpotKey{MeshName: spotMesh, SpotID: "s1"})
		require.NoError(t, err)
		require.Nil(t, got, "the collector removed the dead owner's row")
	})

	t.Run("another tenant can neither read nor write the first", func(t *testing.T) {
		a, err := etcdstore.Dial(ctx, sm.config(sm.aCert, sm.aKey, "", "", rootA, logs))
		require.NoError(t, err)
		defer func() { require.NoError(t, a.Close()) }()
		claim, err := a.ClaimOwnerLease(ctx, "node-a2", time.Minute)
		require.NoError(t, err)
		_, err = a.UpdateSpot(ctx, spotRow("s2", claim.Token, "n1"), location.IntentNewClaim)
		require.NoError(t, err)

		// B works under its own prefix…
		b, err := etcdstore.Dial(ctx, sm.config(sm.bCert, sm.bKey, "zlink-b", userBPass, rootB, logs))
		require.NoError(t, err)
		defer func() { require.NoError(t, b.Close()) }()
		bc, err := b.ClaimOwnerLease(ctx, "node-b", time.Minute)
		require.NoError(t, err)
		require.Equal(t, location.KindClaimed, bc.Kind)

		// …and is refused everywhere under A's: raw reads and writes…
		raw := sm.client(t, sm.bCert, sm.bKey, "zlink-b", userBPass)
		_, err = raw.Get(ctx, rootA, clientv3.WithPrefix())
		require.ErrorIs(t, keep(err), rpctypes.ErrPermissionDenied)
		_, err = raw.Put(ctx, rootA+"owner/7:node-a2", "stolen")
		require.ErrorIs(t, keep(err), rpctypes.ErrPermissionDenied)
		_, err = raw.Delete(ctx, rootA, clientv3.WithPrefix())
		require.ErrorIs(t, keep(err), rpctypes.ErrPermissionDenied)

		// …and a store of B's credentials pointed at A's root fails every
		// call without writing anything.
		intruder, err := etcdstore.New(raw, etcdstore.Options{Root: rootA, Logger: logs.logger()})
		require.NoError(t, err)
		_, err = intruder.ResolveSpot(ctx, location.SpotKey{MeshName: spotMesh, SpotID: "s2"})
		require.ErrorIs(t, keep(err), location.ErrUnavailable)
		_, err = intruder.ClaimOwnerLease(ctx, "node-a2", time.Minute)
		require.Error(t, keep(err))
		_, err = intruder.UpdateSpot(ctx, spotRow("s2", bc.Token, "n1"), location.IntentTakeover)
		require.Error(t, keep(err))
		_, err = intruder.ListSpots(ctx, location.SpotFilter{}, location.PageRequest{})
		require.Error(t, keep(err))
		_, err = intruder.ListAuthorities(ctx, "", "", 10)
		require.Error(t, keep(err))
		require.Error(t, keep(intruder.ExpireOwnerLease(ctx, "node-a2")))

		got, err := a.ResolveSpot(ctx, location.SpotKey{MeshName: spotMesh, SpotID: "s2"})
		require.NoError(t, err)
		require.Equal(t, "node-a2", got.OwnerID, "A's row is untouched")
		lease, err := a.ReadOwnerLease(ctx, "node-a2")
		require.NoError(t, err)
		require.Equal(t, claim.Token, lease.Token, "A's lease is untouched")
	})

	t.Run("refused connections", func(t *testing.T) {
		// No client certificate, a wrong password, a certificate of another CA.
		_, err := etcdstore.Dial(ctx, sm.config("", "", "", "", rootA, logs))
		require.ErrorIs(t, keep(err), location.ErrUnavailable)
		_, err = etcdstore.Dial(ctx, sm.config(sm.bCert, sm.bKey, "zlink-b", wrongPass, rootB, logs))
		require.Error(t, keep(err))
		other := testpki.New(t, "other-ca")
		oc, ok := other.Issue(t, "zlink-a", x509.ExtKeyUsageClientAuth)
		_, err = etcdstore.Dial(ctx, sm.config(oc, ok, "", "", rootA, logs))
		require.ErrorIs(t, keep(err), location.ErrUnavailable)
	})

	t.Run("credentials never appear in logs or errors", func(t *testing.T) {
		cfg := sm.config(sm.bCert, sm.bKey, "zlink-b", userBPass, rootB, logs)
		logs.logger().Info("configuration", "etcd", cfg)
		texts := []string{logs.String(), cfg.String(), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg)}
		for _, err := range errs {
			texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
		}
		keyPEM, err := os.ReadFile(sm.bKey)
		require.NoError(t, err)
		for _, text := range texts {
			for _, secret := range []string{rootPassword, userBPass, wrongPass, "PRIVATE KEY", string(keyPEM)} {
				require.NotContains(t, text, secret)
			}
		}
		require.NotEmpty(t, errs, "the refusals above were collected")
		require.Contains(t, logs.String(), "[redacted]", "the configuration was logged, without its password")
	})
}

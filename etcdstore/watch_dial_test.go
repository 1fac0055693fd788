package etcdstore

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/location"
)

// receive waits for a notification (or the channel's close when closed is
// set).
func receive(t *testing.T, ch <-chan struct{}, closed bool) {
	t.Helper()
	select {
	case _, ok := <-ch:
		require.Equal(t, !closed, ok)
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
}

func TestWatchChanges(t *testing.T) {
	f := newFixture(t)
	a := f.claim(t, "a")
	ctx, cancel := context.WithCancel(t.Context())
	spots, err := f.s.WatchChanges(ctx, location.TableSpots)
	require.NoError(t, err)
	all, err := f.s.WatchChanges(ctx)
	require.NoError(t, err)

	storedIn(t)(f.s.UpdateSpot(t.Context(), spot("s1", a), location.IntentNewClaim))
	receive(t, spots, false)
	receive(t, all, false)
	storedIn(t)(f.s.UpdatePeer(t.Context(), peer("n1", "a"), location.IntentNewClaim))
	receive(t, all, false)

	cancel()
	for {
		if _, ok := <-spots; !ok {
			break
		}
	}
	for {
		if _, ok := <-all; !ok {
			break
		}
	}
	_, err = f.s.WatchChanges(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

func TestDial(t *testing.T) {
	eps := strings.Split(os.Getenv(etcdtest.EnvSharedEndpoints), ",")
	require.NotEmpty(t, eps[0], "the shared member runs")
	s, err := Dial(t.Context(), Config{Endpoints: eps, Options: Options{Root: etcdtest.UniquePrefix(t)}})
	require.NoError(t, err)
	res, err := s.ClaimOwnerLease(t.Context(), "a", time.Minute)
	require.NoError(t, err)
	require.Equal(t, location.KindClaimed, res.Kind)
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

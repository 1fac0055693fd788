package etcdobserve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/etcdtest"
	"github.com/zlink-systems/zlink-etcd/health"
	"github.com/zlink-systems/zlink-etcd/observe/etcdobserve"
)

// The store's health check makes the process unready while its etcd
// member is stopped, and ready again once it is back; liveness never
// follows etcd.
func TestHealthFollowsTheMember(t *testing.T) {
	m, err := etcdtest.StartMember(t.Context(), etcdtest.Config{})
	require.NoError(t, err)
	defer m.Close()
	s, err := etcdstore.Dial(t.Context(), etcdstore.Config{Endpoints: m.Endpoints(), Options: etcdstore.Options{Root: etcdtest.UniquePrefix(t)}})
	require.NoError(t, err)
	defer s.Close()
	check := etcdobserve.StoreCheck(s)
	check.Timeout = 300 * time.Millisecond
	h, err := health.NewHandler(check)
	require.NoError(t, err)

	status, body := probe(t, h, "/readyz?verbose")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "[+]ping ok\n[+]etcd ok\nreadyz check passed\n", body)

	m.Stop(false)
	status, body = probe(t, h, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.True(t, strings.HasPrefix(body, "[+]ping ok\n[-]etcd failed: etcd did not answer a read of "+s.Layout().Root()+" in time: "), body)
	require.True(t, strings.HasSuffix(body, "\nreadyz check failed\n"), body)
	status, body = probe(t, h, "/livez")
	require.Equal(t, http.StatusOK, status, "etcd being down is no reason to restart")
	require.Equal(t, "ok", body)

	require.NoError(t, m.Restart(t.Context()))
	eventually(t, func() bool {
		status, _ := probe(t, h, "/readyz")
		return status == http.StatusOK
	}, "ready again after the member restarted")
}

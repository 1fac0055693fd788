package autoconnect

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// plan is the planner's three outputs as endpoint lists.
type plan struct {
	candidates, desired, notRequired []string
}

// planOf runs the planner.
func planOf(l Local, rows ...location.PeerLocation) plan {
	return plan{
		candidates:  endpoints(Candidates(l, rows)),
		desired:     endpoints(Desired(l, rows, false)),
		notRequired: endpoints(NotRequired(l, rows)),
	}
}

// clientLocal is localA as an Object client without a server channel.
func clientLocal() Local {
	l := localA()
	l.ObjectRole = location.RoleClient
	return l
}

// clientMD marks a row as an Object client without a server channel.
func clientMD() rowOpt {
	return md(MetadataObjectRole, "client", MetadataHasRouteMeshServerChannel, "false")
}

func TestPlanner(t *testing.T) {
	const (
		routeMesh = location.AutoConnectRouteMesh
		fanout    = location.AutoConnectFanout
	)
	none := []string{}

	t.Run("AC-P1_route_mesh_role_filter", func(t *testing.T) {
		got := planOf(localA(),
			router("ob", "node-b", "tcp://b"),
			row("oc", routeMesh, location.PeerRoleDealer, "node-c", "tcp://c"),
			row("od", routeMesh, location.PeerRoleSpot, "node-d", "tcp://d"))
		require.Equal(t, []string{"tcp://b"}, got.candidates)
		require.Equal(t, []string{"tcp://b"}, got.desired)
	})

	t.Run("AC-P2_fanout_pairing", func(t *testing.T) {
		rows := []location.PeerLocation{
			row("op", fanout, location.PeerRolePub, "", "tcp://pub"),
			row("os", fanout, location.PeerRoleSub, "", "tcp://sub2"),
		}
		sub := planOf(local(fanout, location.PeerRoleSub, "", "tcp://sub1"), rows...)
		require.Equal(t, plan{candidates: []string{"tcp://pub", "tcp://sub2"}, desired: []string{"tcp://pub"}, notRequired: none}, sub)
		pub := planOf(local(fanout, location.PeerRolePub, "", "tcp://pub1"), rows...)
		require.Equal(t, plan{candidates: []string{"tcp://pub", "tcp://sub2"}, desired: none, notRequired: none}, pub)
	})

	t.Run("AC-P3_non_router_local_in_route_mesh", func(t *testing.T) {
		got := planOf(local(routeMesh, location.PeerRoleDealer, "node-a", "tcp://a"), router("ob", "node-b", "tcp://b"))
		require.Equal(t, []string{"tcp://b"}, got.candidates)
		require.Equal(t, none, got.desired)
	})

	t.Run("AC-P4_type_and_mesh_mismatch", func(t *testing.T) {
		got := planOf(clientLocal(),
			row("ob", fanout, location.PeerRolePub, "node-b", "tcp://b", clientMD()),
			router("oc", "node-c", "tcp://c", clientMD(), mesh("other")),
			row("od", fanout, location.PeerRoleRouter, "node-d", "tcp://d", clientMD()))
		require.Equal(t, plan{candidates: none, desired: none, notRequired: none}, got)
	})

	t.Run("AC-P5_empty_endpoint", func(t *testing.T) {
		got := planOf(clientLocal(), router("ob", "node-b", "", clientMD()), router("oc", "node-c", ""))
		require.Equal(t, plan{candidates: none, desired: none, notRequired: none}, got)
	})

	t.Run("AC-P6_self_by_rid", func(t *testing.T) {
		opaque, err := location.RoutingIDFromHex("6E6F64652D61")
		require.NoError(t, err)
		self := router("oa2", "", "tcp://a-old", clientMD())
		self.NodeRID = &opaque
		got := planOf(clientLocal(), router("oa", "node-a", "tcp://elsewhere", clientMD()), self)
		require.Equal(t, plan{candidates: none, desired: none, notRequired: none}, got)
	})

	t.Run("AC-P7_self_by_endpoint", func(t *testing.T) {
		got := planOf(clientLocal(), router("ox", "node-x", "tcp://a", clientMD()), router("ob", "node-b", "tcp://a"))
		require.Equal(t, plan{candidates: none, desired: none, notRequired: none}, got)
	})

	t.Run("AC-P8_pairwise_initiator_by_rid", func(t *testing.T) {
		require.Equal(t, []string{"tcp://b"}, planOf(localA(), router("ob", "node-b", "tcp://b")).desired)
		lb := local(routeMesh, location.PeerRoleRouter, "node-b", "tcp://b")
		require.Equal(t, none, planOf(lb, router("oa", "node-a", "tcp://a")).desired)

		nodes := []struct{ rid, ep string }{
			{"node-a", "tcp://z"}, {"node-b", "tcp://y"}, {"node-0", "tcp://x"}, {"node-z", "tcp://w"}, {"\x00\xff", "tcp://v"},
		}
		for i, x := range nodes {
			for j, y := range nodes {
				if i == j {
					continue
				}
				lx := local(routeMesh, location.PeerRoleRouter, x.rid, x.ep)
				ly := local(routeMesh, location.PeerRoleRouter, y.rid, y.ep)
				xDials := ShouldDial(lx, router("oy", y.rid, y.ep))
				yDials := ShouldDial(ly, router("ox", x.rid, x.ep))
				require.NotEqual(t, xDials, yDials, "exactly one of %q and %q dials", x.rid, y.rid)
			}
		}
	})

	t.Run("AC-P9_initiator_ignores_endpoint_order_when_rids_exist", func(t *testing.T) {
		l := local(routeMesh, location.PeerRoleRouter, "node-a", "tcp://z")
		require.Equal(t, []string{"tcp://a"}, planOf(l, router("ob", "node-b", "tcp://a")).desired)
	})

	t.Run("AC-P10_endpoint_fallback", func(t *testing.T) {
		cases := []struct {
			name, localEP, rowEP string
			dial                 bool
		}{
			{"lower_local_endpoint_dials", "tcp://a:1", "tcp://b:1", true},
			{"higher_local_endpoint_waits", "tcp://b:1", "tcp://a:1", false},
			// Byte order: '.' (0x2e) sorts before ':' (0x3a), so tcp://a.b:1
			// dials tcp://a:1. The reference's locale collation orders ':'
			// before '.', where tcp://a:1 dials instead (06 §12 Q3).
			{"byte_order_not_collation", "tcp://a.b:1", "tcp://a:1", true},
			{"byte_order_not_collation_reverse", "tcp://a:1", "tcp://a.b:1", false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				l := local(routeMesh, location.PeerRoleRouter, "", c.localEP)
				got := planOf(l, router("ob", "node-b", c.rowEP)).desired
				if c.dial {
					require.Equal(t, []string{c.rowEP}, got)
				} else {
					require.Equal(t, none, got)
				}
			})
		}
	})

	t.Run("AC-P11_dial_only_local", func(t *testing.T) {
		l := local(routeMesh, location.PeerRoleRouter, "node-z", "")
		got := planOf(l, router("oa", "node-a", "tcp://a"), router("ob", "node-b", "tcp://b"), router("o0", "node-0", "tcp://0"))
		require.Equal(t, []string{"tcp://a", "tcp://b", "tcp://0"}, got.desired)
	})

	t.Run("AC-P12_draining", func(t *testing.T) {
		rows := []location.PeerLocation{router("ob", "node-b", "tcp://b", drain())}
		require.Equal(t, []string{"tcp://b"}, endpoints(Candidates(localA(), rows)))
		require.Equal(t, none, endpoints(Desired(localA(), rows, false)))
		require.Equal(t, []string{"tcp://b"}, endpoints(Desired(localA(), rows, true)))
	})

	t.Run("AC-P13_client_pair_not_required", func(t *testing.T) {
		rows := []location.PeerLocation{router("ob", "node-b", "tcp://b", gen(3), clientMD(), md(MetadataDescriptorRevision, "7"))}
		require.Equal(t, none, endpoints(Desired(clientLocal(), rows, false)))
		nr := NotRequired(clientLocal(), rows)
		require.Len(t, nr, 1)
		require.Equal(t, "tcp://b", nr[0].Endpoint)
		require.Equal(t, int64(3), nr[0].LifecycleGeneration)
		require.Equal(t, big.NewInt(7), nr[0].DescriptorRevision)
		require.Equal(t, "router|6e6f64652d62|3", nr[0].Key)
		require.Equal(t, "ob", nr[0].OwnerID)
	})

	t.Run("AC-P14_server_channel_makes_it_required", func(t *testing.T) {
		cases := []struct {
			value    string
			required bool
		}{{"true", true}, {"TRUE", false}, {"1", false}, {"false", false}}
		for _, c := range cases {
			t.Run(c.value, func(t *testing.T) {
				got := planOf(clientLocal(), router("ob", "node-b", "tcp://b", clientMD(), md(MetadataHasRouteMeshServerChannel, c.value)))
				if c.required {
					require.Equal(t, plan{candidates: []string{"tcp://b"}, desired: []string{"tcp://b"}, notRequired: none}, got)
				} else {
					require.Equal(t, plan{candidates: []string{"tcp://b"}, desired: none, notRequired: []string{"tcp://b"}}, got)
				}
			})
		}
		// The local side's server channel makes it required too.
		l := clientLocal()
		l.HasRouteMeshServerChannel = true
		require.Equal(t, plan{candidates: []string{"tcp://b"}, desired: []string{"tcp://b"}, notRequired: none},
			planOf(l, router("ob", "node-b", "tcp://b", clientMD())))
	})

	t.Run("AC-P15_not_required_ignores_role_and_draining", func(t *testing.T) {
		got := planOf(clientLocal(),
			router("ob", "node-b", "tcp://b", clientMD(), drain()),
			row("oc", routeMesh, location.PeerRoleDealer, "node-c", "tcp://c", clientMD()))
		require.Equal(t, []string{"tcp://b", "tcp://c"}, got.notRequired)
		require.Equal(t, []string{"tcp://b"}, got.candidates)
		require.Equal(t, none, got.desired)
	})

	t.Run("AC-P16_fanout_has_no_not_required", func(t *testing.T) {
		l := local(fanout, location.PeerRoleSub, "node-a", "tcp://a")
		l.ObjectRole = location.RoleClient
		got := NotRequired(l, []location.PeerLocation{row("ob", fanout, location.PeerRolePub, "node-b", "tcp://b", clientMD())})
		require.Equal(t, []Target{}, got)
	})

	t.Run("AC-P17_descriptor_revision_parsing", func(t *testing.T) {
		huge, ok := new(big.Int).SetString("9223372036854775808", 10)
		require.True(t, ok)
		cases := []struct {
			text string
			want *big.Int
		}{
			{"7", big.NewInt(7)}, {" 7 ", big.NewInt(7)}, {"0x10", big.NewInt(16)}, {"+5", big.NewInt(5)},
			{"007", big.NewInt(7)}, {"", nil}, {"0", nil}, {"-1", nil}, {"1e3", nil}, {"abc", nil},
			{"0X1f", big.NewInt(31)}, {"0o17", big.NewInt(15)}, {"0b101", big.NewInt(5)}, {"\u00a0\ufeff9\u2028", big.NewInt(9)},
			{"0x", nil}, {"+0x10", nil}, {"-0x10", nil}, {"1_000", nil}, {"1.0", nil}, {"0b102", nil}, {"+", nil}, {"\u00859", nil},
			{"9223372036854775808", huge},
		}
		for _, c := range cases {
			t.Run(c.text, func(t *testing.T) {
				require.Equal(t, c.want, ParseDescriptorRevision(c.text))
				nr := NotRequired(clientLocal(), []location.PeerLocation{router("ob", "node-b", "tcp://b", clientMD(), md(MetadataDescriptorRevision, c.text))})
				require.Len(t, nr, 1)
				require.Equal(t, c.want, nr[0].DescriptorRevision)
			})
		}
		t.Run("missing", func(t *testing.T) {
			nr := NotRequired(clientLocal(), []location.PeerLocation{router("ob", "node-b", "tcp://b", clientMD())})
			require.Len(t, nr, 1)
			require.Nil(t, nr[0].DescriptorRevision)
		})
	})

	t.Run("AC-P18_target_key", func(t *testing.T) {
		require.Equal(t, "router|6e6f64652d62|3", TargetKey(router("ob", "node-b", "tcp://b", gen(3))))
		require.Equal(t, "router|tcp://x|1", TargetKey(router("ox", "", "tcp://x")))
		require.NotEqual(t, TargetKey(router("ob", "node-b", "tcp://b", gen(3))), TargetKey(router("ob", "node-b", "tcp://b", gen(4))))
		require.Equal(t, []string{"router|6e6f64652d62|3"}, keysOf(Desired(localA(), []location.PeerLocation{router("ob", "node-b", "tcp://b", gen(3))}, false)))
	})

	t.Run("AC-P19_ignored_fields", func(t *testing.T) {
		base := []location.PeerLocation{
			router("ob", "node-b", "tcp://b"),
			router("oc", "node-c", "tcp://c", clientMD()),
			router("o0", "node-0", "tcp://0"),
		}
		varied := make([]location.PeerLocation, len(base))
		for i, r := range base {
			r = clonePeer(r)
			r.Weight, r.Value, r.Capabilities = int64(100*i+7), int64(9000+i), []string{"x", "y"}
			varied[i] = r
		}
		l := clientLocal()
		require.Equal(t, Candidates(l, base), Candidates(l, varied))
		require.Equal(t, Desired(l, base, false), Desired(l, varied, false))
		require.Equal(t, Desired(l, base, true), Desired(l, varied, true))
		require.Equal(t, NotRequired(l, base), NotRequired(l, varied))
	})

	t.Run("AC-P20_insertion_order", func(t *testing.T) {
		got := Desired(localA(), []location.PeerLocation{
			router("oc", "node-c", "tcp://c"),
			router("ob", "node-b", "tcp://b"),
			router("oc2", "node-c", "tcp://c2"),
		}, false)
		require.Equal(t, []string{"tcp://c2", "tcp://b"}, endpoints(got))
		require.Equal(t, "oc2", got[0].OwnerID)
		require.Equal(t, []string{"router|6e6f64652d63|1", "router|6e6f64652d62|1"}, keysOf(got))
	})
}

func TestExplainDecision(t *testing.T) {
	cases := []struct {
		name  string
		local Local
		row   location.PeerLocation
		want  string
	}{
		{"type", localA(), row("o", location.AutoConnectFanout, location.PeerRolePub, "node-b", "tcp://b"), "skip:type=fanout"},
		{"mesh", localA(), router("o", "node-b", "tcp://b", mesh("other")), "skip:mesh=other"},
		{"role", localA(), row("o", location.AutoConnectRouteMesh, location.PeerRoleDealer, "node-b", "tcp://b"), "skip:role=dealer"},
		{"empty_endpoint", localA(), router("o", "node-b", ""), "skip:empty-endpoint"},
		{"draining", localA(), router("o", "node-b", "tcp://b", drain()), "skip:draining"},
		{"self", localA(), router("o", "node-a", "tcp://a2"), "skip:self"},
		{"not_initiator", localA(), router("o", "node-0", "tcp://0"), "skip:not-initiator localRid=6e6f64652d61"},
		{"not_initiator_without_rid", local(location.AutoConnectRouteMesh, location.PeerRoleRouter, "", "tcp://z"), router("o", "node-0", "tcp://0"), "skip:not-initiator localRid=<none>"},
		{"dial", localA(), router("o", "node-b", "tcp://b"), "dial"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, ExplainDecision(c.local, c.row))
		})
	}
}

package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// explainStates names the kind of failure from what the members answered
// and the cluster's size, and says it in one sentence.
func TestExplainStates(t *testing.T) {
	refused := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	endpoints := []string{"a", "b", "c"}
	up := func(ep string, leader uint64) memberState { return memberState{endpoint: ep, leader: leader} }
	down := func(ep string) memberState { return memberState{endpoint: ep, err: refused} }
	tests := []struct {
		name    string
		states  []memberState
		members int
		kind    error
		msg     string
	}{
		{name: "all led", states: []memberState{up("a", 7), up("b", 7), up("c", 7)}, members: 3, kind: errSlowCluster,
			msg: "an etcd request waited longer than W although the cluster has a leader (a (leader 7), b (leader 7), c (leader 7)): the cluster is overloaded or the request too big; raise --command-timeout"},
		{name: "a quorum led", states: []memberState{up("a", 7), up("b", 7), down("c")}, members: 3, kind: errSlowCluster,
			msg: "an etcd request waited longer than W: the cluster has a leader (a (leader 7), b (leader 7)), but c does not answer: a request sent to a member that does not answer waits until its deadline; bring the member back or remove it from --endpoints"},
		{name: "size unknown: the claim is believed", states: []memberState{up("a", 7), down("b"), down("c")}, members: 0, kind: errSlowCluster,
			msg: "an etcd request waited longer than W: the cluster has a leader (a (leader 7)), but b, c do not answer: a request sent to a member that does not answer waits until its deadline; bring the member back or remove it from --endpoints"},
		{name: "one of three still names a leader", states: []memberState{down("a"), down("b"), up("c", 7)}, members: 3, kind: errNoLeader,
			msg: "the etcd cluster has no leader: c (leader 7) still names a leader that has no quorum behind it (1 of 3 members answer), a, b do not answer (a request waited W): a quorum of the members must run and reach each other"},
		{name: "two of four", states: []memberState{up("a", 7), up("b", 0), down("c")}, members: 4, kind: errNoLeader,
			msg: "the etcd cluster has no leader: b answers without a leader, a (leader 7) still names a leader that has no quorum behind it (2 of 4 members answer), c does not answer (a request waited W): a quorum of the members must run and reach each other"},
		{name: "one leaderless", states: []memberState{down("a"), down("b"), up("c", 0)}, members: 3, kind: errNoLeader,
			msg: "the etcd cluster has no leader: c answers without a leader, a, b do not answer (a request waited W): a quorum of the members must run and reach each other"},
		{name: "all leaderless", states: []memberState{up("a", 0), up("b", 0), up("c", 0)}, members: 3, kind: errNoLeader,
			msg: "the etcd cluster has no leader: a, b, c answer without a leader (a request waited W): a quorum of the members must run and reach each other"},
		{name: "none answers", states: []memberState{down("a"), down("b"), down("c")}, members: 0, kind: errUnreachable,
			msg: "cannot reach etcd at a,b,c: no member answered within 1s (a: connection refused; b: connection refused; c: connection refused)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := explainStates(tc.states, tc.members, endpoints, "W")
			require.ErrorIs(t, err, tc.kind)
			require.Equal(t, tc.msg, err.Error())
		})
	}
}

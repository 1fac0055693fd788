package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Kinds of cluster failure (test with errors.Is).
var (
	// errNoLeader: members answer, but none has a leader (quorum lost).
	errNoLeader = errors.New("the etcd cluster has no leader")
	// errUnreachable: no member answers.
	errUnreachable = errors.New("no etcd member answers")
	// errSlowCluster: the cluster has a leader but a request ran out of
	// --command-timeout.
	errSlowCluster = errors.New("etcd answers too slowly")
)

// clusterError is a failure of the cluster as a whole, explained.
type clusterError struct {
	kind error
	msg  string
}

// Error implements error.
func (e *clusterError) Error() string { return e.msg }

// Unwrap returns the kind.
func (e *clusterError) Unwrap() error { return e.kind }

// statusBudget bounds the status requests of a diagnosis.
const statusBudget = time.Second

// memberState is what one endpoint answered to a status request.
type memberState struct {
	endpoint string
	err      error
	leader   uint64
}

// memberStates asks every endpoint for its status (served by the member
// itself, without a quorum), all at once, within statusBudget, and one of
// them for the number of members of the cluster (0 when none says).
func memberStates(ctx context.Context, c *clientv3.Client, endpoints []string) (states []memberState, members int) {
	ctx, cancel := context.WithTimeout(ctx, statusBudget)
	defer cancel()
	states = make([]memberState, len(endpoints))
	var wg sync.WaitGroup
	for i, ep := range endpoints {
		wg.Go(func() {
			states[i].endpoint = ep
			resp, err := c.Maintenance.Status(ctx, ep)
			if err != nil {
				states[i].err = err
				return
			}
			states[i].leader = resp.Leader
		})
	}
	wg.Go(func() {
		// Serializable: the answering member's own list, no quorum needed.
		if resp, err := c.MemberList(ctx, clientv3.WithSerializable()); err == nil {
			members = len(resp.Members)
		}
	})
	wg.Wait()
	return states, members
}

// diagnoseCluster explains why a request of the run waited longer than
// what: the cluster has no leader, no member answers, or it is only slow.
func diagnoseCluster(ctx context.Context, c *clientv3.Client, endpoints []string, what string) error {
	states, members := memberStates(ctx, c, endpoints)
	return explainStates(states, members, endpoints, what)
}

// explainStates classifies what the members answered. members is the
// cluster's size (0 if unknown). A member that still names a leader while
// fewer than a quorum of the members answer is believed only when a
// quorum could stand behind it: a leader cut off from its quorum keeps
// its title until it misses the followers' answers for an election
// timeout (longer on a loaded machine), and a follower keeps naming it
// until its own election timeout.
func explainStates(states []memberState, members int, endpoints []string, what string) error {
	var leaderless, silent, led []string
	var reasons []string
	for _, m := range states {
		switch {
		case m.err != nil:
			silent = append(silent, m.endpoint)
			reasons = append(reasons, m.endpoint+": "+shortRPCError(m.err))
		case m.leader == 0:
			leaderless = append(leaderless, m.endpoint)
		default:
			led = append(led, fmt.Sprintf("%s (leader %x)", m.endpoint, m.leader))
		}
	}
	answered := len(leaderless) + len(led)
	noQuorum := members > 0 && 2*answered <= members
	switch {
	case len(led) > 0 && !noQuorum && len(silent) > 0:
		return &clusterError{kind: errSlowCluster, msg: fmt.Sprintf(
			"an etcd request waited longer than %s: the cluster has a leader (%s), but %s %s not answer: a request sent to a member that does not answer waits until its deadline; bring the member back or remove it from --endpoints",
			what, strings.Join(led, ", "), strings.Join(silent, ", "), doVerb(len(silent)))}
	case len(led) > 0 && !noQuorum:
		return &clusterError{kind: errSlowCluster, msg: fmt.Sprintf(
			"an etcd request waited longer than %s although the cluster has a leader (%s): the cluster is overloaded or the request too big; raise --command-timeout",
			what, strings.Join(led, ", "))}
	case answered > 0:
		var parts []string
		if len(leaderless) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s without a leader", strings.Join(leaderless, ", "), answerVerb(len(leaderless))))
		}
		if len(led) > 0 {
			parts = append(parts, fmt.Sprintf("%s still %s a leader that has no quorum behind it (%d of %d members answer)",
				strings.Join(led, ", "), nameVerb(len(led)), answered, members))
		}
		if len(silent) > 0 {
			parts = append(parts, fmt.Sprintf("%s %s not answer", strings.Join(silent, ", "), doVerb(len(silent))))
		}
		return &clusterError{kind: errNoLeader, msg: fmt.Sprintf(
			"the etcd cluster has no leader: %s (a request waited %s): a quorum of the members must run and reach each other",
			strings.Join(parts, ", "), what)}
	default:
		return &clusterError{kind: errUnreachable, msg: fmt.Sprintf("cannot reach etcd at %s: no member answered within %v (%s)",
			strings.Join(endpoints, ","), statusBudget, strings.Join(reasons, "; "))}
	}
}

// answerVerb and doVerb agree with a count of endpoints.
func answerVerb(n int) string {
	if n == 1 {
		return "answers"
	}
	return "answer"
}

func nameVerb(n int) string {
	if n == 1 {
		return "names"
	}
	return "name"
}

func doVerb(n int) string {
	if n == 1 {
		return "does"
	}
	return "do"
}

// shortRPCError renders a failed request's reason in a few words.
func shortRPCError(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		return "no answer"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	}
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

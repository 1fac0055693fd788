package demo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// nodeTable prints every node: state, lease, lifecycle, whom it dials and
// how many links it takes part in.
func (r *runner) nodeTable(ctx context.Context) error {
	linked := map[string]int{}
	for _, n := range r.running() {
		for _, t := range n.exec.targets() {
			linked[n.name]++
			if t.NodeRID != nil {
				linked[string(*t.NodeRID)]++
			}
		}
	}
	var rows [][]string
	leases := map[string]location.OwnerLeaseReadResult{}
	err := r.retry(ctx, "read the owner leases", func(ctx context.Context) error {
		for _, n := range r.nodes {
			res, err := r.store.ReadOwnerLease(ctx, n.owner)
			if err != nil {
				return fmt.Errorf("read %s's lease: %w", n.name, err)
			}
			leases[n.name] = res
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range r.nodes {
		lease, left := "-", "-"
		res := leases[n.name]
		if res.Kind == location.KindFound {
			lease = strconv.FormatInt(res.Token.LeaseGeneration, 10)
			left = res.LeaseExpiresAt.Sub(res.StoreNow).Round(100 * time.Millisecond).String()
		}
		dials := "-"
		if n.state == nodeRunning {
			var names []string
			for _, t := range n.exec.targets() {
				names = append(names, fmt.Sprintf("%s#%d", t.NodeRID, t.LifecycleGeneration))
			}
			if len(names) > 0 {
				dials = strings.Join(names, " ")
			}
		}
		rows = append(rows, []string{n.name, string(n.state), lease, left, strconv.FormatInt(n.lifecycle(), 10), dials,
			fmt.Sprintf("%d/%d", linked[n.name], r.wantLinks(n))})
	}
	r.out.linef("")
	r.out.table([]string{"NODE", "STATE", "LEASE GEN", "LEASE LEFT", "LIFECYCLE", "DIALS", "LINKS"}, rows)
	r.out.linef("    mesh: %d of %d links up", r.links(), r.expectedLinks())
	return nil
}

// wantLinks is how many links n should take part in.
func (r *runner) wantLinks(n *node) int {
	if n.state != nodeRunning {
		return 0
	}
	return len(r.running()) - 1
}

// actorTable prints every actor: where its row says it is and what its
// authority record says.
func (r *runner) actorTable(ctx context.Context) error {
	var rows [][]string
	err := r.retry(ctx, "read the actors", func(ctx context.Context) (err error) {
		rows, err = r.actorRows(ctx)
		return err
	})
	if err != nil {
		return err
	}
	r.out.linef("")
	r.out.table([]string{"ACTOR", "NODE", "AUTHORITY OWNER", "OWNER LIVE", "VERSION", "OBJECT GEN", "OWNER GEN"}, rows)
	return nil
}

// actorRows reads the rows of the actor table.
func (r *runner) actorRows(ctx context.Context) ([][]string, error) {
	var rows [][]string
	for _, a := range r.actors {
		row, err := r.store.ResolveActor(ctx, location.ActorKey{MeshName: r.opts.Mesh, ActorID: a.id})
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", a.id, err)
		}
		key, err := a.authorityKey()
		if err != nil {
			return nil, err
		}
		auth, err := r.store.ReadAuthority(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("read %s's authority: %w", a.id, err)
		}
		node, owner, version, ownerGen, live := "-", "-", "-", "-", "-"
		if row != nil {
			node = row.OwnerNodeRID.String()
		}
		if s := auth.Snapshot; auth.Kind == location.KindSnapshot && s != nil {
			owner = fmt.Sprintf("%s (lease gen %d)", s.Owner.OwnerID, s.Owner.LeaseGeneration)
			version, ownerGen = string(s.StoreVersion), strconv.FormatInt(s.AuthorityOwnerGeneration, 10)
			lease, err := r.store.ReadOwnerLease(ctx, s.Owner.OwnerID)
			if err != nil {
				return nil, err
			}
			live = "no"
			if lease.Kind == location.KindFound && lease.Token == s.Owner {
				live = "yes"
			}
		}
		rows = append(rows, []string{a.id, node, owner, live, version, strconv.FormatInt(a.objectGeneration, 10), ownerGen})
	}
	return rows, nil
}

// writeSummary prints the stage results and the verdict.
func (r *runner) writeSummary(s *Summary) {
	var rows [][]string
	for _, st := range s.Stages {
		took := "-"
		if st.Outcome != outcomeSkipped {
			took = seconds(st.Took)
		}
		rows = append(rows, []string{st.Name, st.Outcome, took, st.Detail})
	}
	r.out.linef("\n== summary")
	r.out.table([]string{"STAGE", "RESULT", "TIME", "REACHED"}, rows)
	if s.OK() {
		r.out.linef("\ndemo: every expected state was reached in %s", seconds(s.Took))
	} else {
		r.out.linef("\ndemo: FAILED after %s", seconds(s.Took))
	}
}

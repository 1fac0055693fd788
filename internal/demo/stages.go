package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/location"
)

// join starts every node and waits for the full mesh.
func (r *runner) join(ctx context.Context) (string, error) {
	for _, n := range r.nodes {
		if err := r.startNode(ctx, n); err != nil {
			return "", err
		}
	}
	if err := r.converge(ctx, "mesh converged"); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d nodes, %d links", len(r.running()), r.links()), nil
}

// createActors creates the actors round-robin over the nodes.
func (r *runner) createActors(ctx context.Context) (string, error) {
	for i := range r.opts.Actors {
		a := &actor{id: fmt.Sprintf("player-%d", i+1), seq: i + 1}
		if err := r.createActor(ctx, a, r.nodes[i%len(r.nodes)]); err != nil {
			return "", err
		}
		r.actors = append(r.actors, a)
	}
	if err := r.actorTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d actors created", len(r.actors)), nil
}

// relocate moves the first actor to the last node.
func (r *runner) relocate(ctx context.Context) (string, error) {
	a, to := r.actors[0], r.nodes[len(r.nodes)-1]
	from := a.home
	if err := r.moveActor(ctx, a, to, location.IntentTakeover); err != nil {
		return "", err
	}
	if err := r.actorTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s moved %s → %s", a.id, from.name, to.name), nil
}

// crash stops the victim as a crash would (no cleanup), revokes its lease
// and waits until the survivors dropped it.
func (r *runner) crash(ctx context.Context) (string, error) {
	v := r.victim
	if err := v.stop(ctx, false, nodeCrashed); err != nil {
		return "", err
	}
	err := r.retry(ctx, "revoke "+v.name+"'s lease", func(ctx context.Context) error {
		if err := r.store.ExpireOwnerLease(ctx, v.owner); err != nil {
			return err
		}
		lease, err := r.store.ReadOwnerLease(ctx, v.owner)
		if err != nil {
			return err
		}
		if lease.Kind != location.KindMissing {
			return errState("read the crashed owner's lease", lease.Kind)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	r.out.eventf("%s is gone: its owner lease was revoked; its descriptor, peer row and actors stay behind", v.name)
	if err := r.converge(ctx, "survivors converged"); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s crashed; %d survivors, %d links", v.name, len(r.running()), r.links()), nil
}

// adopt moves every actor of the crashed node to the adopter.
func (r *runner) adopt(ctx context.Context) (string, error) {
	var moved []string
	for _, a := range r.actors {
		if a.home != r.victim {
			continue
		}
		if err := r.moveActor(ctx, a, r.adopter, location.IntentNewClaim); err != nil {
			return "", err
		}
		moved = append(moved, a.id)
	}
	if len(moved) == 0 {
		r.out.eventf("no actor lived on %s", r.victim.name)
		return "nothing to adopt", nil
	}
	if err := r.actorTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s adopted %s", r.adopter.name, strings.Join(moved, ", ")), nil
}

// collect runs the garbage collector dry and for real and checks that it
// removed exactly the dead owner's descriptor and peer row. A collection
// whose answer was lost is run again: it then removes what is left, and
// the listing afterwards shows that nothing of the dead owner remains.
func (r *runner) collect(ctx context.Context) (string, error) {
	v := r.victim
	var dry, rep etcdstore.GCReport
	err := r.retry(ctx, "gc dry run", func(ctx context.Context) (err error) {
		dry, err = r.store.CollectGarbage(ctx, etcdstore.GCOptions{DryRun: true})
		return err
	})
	if err != nil {
		return "", err
	}
	r.out.eventf("dry run: dead owners %v, %d location rows, %d stale index entries", dry.DeadOwners, dry.Rows, dry.StaleIndexEntries)
	// The dead owner held its descriptor and its peer row; its actors were
	// adopted and authority records are never collected.
	const wantRows = 2
	if !slices.Equal(dry.DeadOwners, []string{v.owner}) || dry.Rows != wantRows {
		return "", failCheck("dry run found %d rows of dead owners %v, want %d rows (descriptor and peer row) of [%s]",
			dry.Rows, dry.DeadOwners, wantRows, v.owner)
	}
	attempts := 0
	err = r.retry(ctx, "gc", func(ctx context.Context) (err error) {
		attempts++
		rep, err = r.store.CollectGarbage(ctx, etcdstore.GCOptions{})
		return err
	})
	if err != nil {
		return "", err
	}
	r.out.eventf("applied: dead owners %v, %d location rows removed", rep.DeadOwners, rep.Rows)
	if attempts == 1 && (!slices.Equal(rep.DeadOwners, dry.DeadOwners) || rep.Rows != dry.Rows) {
		return "", failCheck("collected %d rows of %v; the dry run promised %d rows of %v", rep.Rows, rep.DeadOwners, dry.Rows, dry.DeadOwners)
	}
	var nodes, peers []string
	err = r.retry(ctx, "list what is left", func(ctx context.Context) (err error) {
		nodes, peers, err = r.published(ctx)
		return err
	})
	if err != nil {
		return "", err
	}
	if slices.Contains(nodes, v.name) || slices.Contains(peers, v.name) {
		return "", failCheck("%s still has a descriptor (%v) or a peer row (%v)", v.name, nodes, peers)
	}
	r.out.eventf("descriptors left: %s; peer rows left: %s", strings.Join(nodes, " "), strings.Join(peers, " "))
	if err := r.nodeTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("1 dead owner (%s), %d rows removed", v.owner, dry.Rows), nil
}

// published lists the nodes with a descriptor and those with a peer row.
func (r *runner) published(ctx context.Context) (nodes, peers []string, err error) {
	page, err := r.store.ListMeshNodes(ctx, r.opts.Mesh, location.PageRequest{PageSize: 1000})
	if err != nil {
		return nil, nil, fmt.Errorf("list mesh nodes: %w", err)
	}
	for _, d := range page.Items {
		nodes = append(nodes, string(d.RID))
	}
	mesh := r.opts.Mesh
	rows, err := r.store.ListPeers(ctx, location.PeerFilter{MeshName: &mesh})
	if err != nil {
		return nil, nil, fmt.Errorf("list peers: %w", err)
	}
	for _, p := range rows {
		if p.NodeRID != nil {
			peers = append(peers, string(*p.NodeRID))
		}
	}
	return nodes, peers, nil
}

// rejoin restarts the victim and waits for the full mesh again.
func (r *runner) rejoin(ctx context.Context) (string, error) {
	v := r.victim
	if err := r.startNode(ctx, v); err != nil {
		return "", err
	}
	if err := r.converge(ctx, "mesh converged again"); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s back (lease gen %d, lifecycle %d); %d links", v.name, v.token().LeaseGeneration, v.lifecycle(), r.links()), nil
}

// shutdown makes every node leave (meshnode.Node.Leave: its loop stops,
// disconnecting its peers and removing its peer row; the owner's bulk
// removal takes every row and authority record it holds; its lease is
// released), and checks that nothing of the mesh is left.
func (r *runner) shutdown(ctx context.Context) (string, error) {
	for _, n := range r.running() {
		if err := n.stop(ctx, true, nodeStopped); err != nil {
			return "", fmt.Errorf("%s: leave: %w", n.name, err)
		}
		r.out.eventf("%s left: loop stopped, everything it owned removed, lease released", n.name)
	}
	err := r.waitFor(ctx, "nothing left", func(ctx context.Context) (bool, string, error) {
		left, err := r.leftovers(ctx)
		return left == "", "left behind: " + left, err
	})
	if err != nil {
		return "", err
	}
	r.out.eventf("nothing is left: no descriptor, peer row, actor row, authority record or owner lease")
	if err := r.nodeTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d nodes left; nothing remains", len(r.nodes)), nil
}

// leftovers describes the descriptors, peer rows, actor rows, authority
// records and owner leases still present, or returns "".
func (r *runner) leftovers(ctx context.Context) (string, error) {
	nodes, peers, err := r.published(ctx)
	if err != nil {
		return "", err
	}
	var parts []string
	if len(nodes) > 0 {
		parts = append(parts, fmt.Sprintf("descriptors %v", nodes))
	}
	if len(peers) > 0 {
		parts = append(parts, fmt.Sprintf("peer rows %v", peers))
	}
	actors, err := r.store.ListActors(ctx, location.ActorFilter{}, location.PageRequest{PageSize: 1000})
	if err != nil {
		return "", fmt.Errorf("list actors: %w", err)
	}
	if len(actors.Items) > 0 {
		parts = append(parts, fmt.Sprintf("%d actor rows", len(actors.Items)))
	}
	auth, err := r.store.ListAuthorities(ctx, "", "", 1000)
	if err != nil {
		return "", fmt.Errorf("list authorities: %w", err)
	}
	if len(auth.Items) > 0 {
		parts = append(parts, fmt.Sprintf("%d authority records", len(auth.Items)))
	}
	for _, n := range r.nodes {
		lease, err := r.store.ReadOwnerLease(ctx, n.owner)
		if err != nil {
			return "", err
		}
		if lease.Kind != location.KindMissing {
			parts = append(parts, n.name+"'s lease")
		}
	}
	return strings.Join(parts, ", "), nil
}

// leave stops every node without any cleanup and keeps its lease until it
// runs out, so that the store is left as a crash would leave it.
func (r *runner) leave(ctx context.Context) (string, error) {
	for _, n := range r.running() {
		if err := n.stop(ctx, false, nodeStopped); err != nil {
			return "", fmt.Errorf("%s: stop: %w", n.name, err)
		}
	}
	r.out.eventf("every node stopped; nothing was removed and no lease released: the leases run out within %v", r.opts.LeaseTTL)
	if err := r.nodeTable(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d nodes stopped; rows kept, leases run out within %v", len(r.nodes), r.opts.LeaseTTL), nil
}

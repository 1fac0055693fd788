package integration

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/zlink-systems/zlink-etcd/location"
)

// diagnose explains an illegal history: it replays the longest
// linearizable prefix porcupine found through the model, shows the model's
// state there, and tries every call that could come next, with the reason
// each one disagrees. Histories are not reproducible (timing), so the
// report has to say it all.
func diagnose(model porcupine.Model, stats *modelStats, ops []porcupine.Operation, info porcupine.LinearizationInfo, records []*record) string {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	state := model.Init()
	done := make(map[int]bool, len(best))
	for _, id := range best {
		ok, next := model.Step(state, ops[id].Input, ops[id].Output)
		if !ok {
			return fmt.Sprintf("the longest prefix does not replay at operation %d", id)
		}
		state, done[id] = next, true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "longest linearizable prefix: %d of %d operations\n", len(best), len(ops))
	fmt.Fprintf(&b, "model state after it:\n%s", describeModel(state.(*modelState)))
	// The calls that could come next: not linearized, and called before
	// every other such call returned.
	frontier := int64(math.MaxInt64)
	for id, op := range ops {
		if !done[id] && op.Return < frontier {
			frontier = op.Return
		}
	}
	b.WriteString("calls that could come next, and why the model disagrees:\n")
	var first int64 = math.MaxInt64
	for id, op := range ops {
		if done[id] || op.Call > frontier {
			continue
		}
		first = min(first, op.Call)
		stats.note("")
		ok, _ := model.Step(state, op.Input, op.Output)
		why := "accepted (then a later call fails)"
		if !ok {
			stats.mu.Lock()
			why = stats.lastDisagreement
			stats.mu.Unlock()
		}
		in := op.Input.(opInput)
		fmt.Fprintf(&b, "  #%d c%d [%.3fms, %s] %v -> %s\n    %s\n", in.id, in.client, float64(op.Call)/1e6,
			returnText(op.Return), in.c, describeOutput(op.Output.(opOutput)), why)
	}
	b.WriteString("records around them:\n")
	var window []*record
	for _, r := range sortedByStart(records) {
		if r.end >= first-int64(300e6) && r.start <= frontier+int64(300e6) {
			window = append(window, r)
		}
	}
	b.WriteString(describeRecords(window, 200))
	return b.String()
}

// returnText renders a return time (unknown outcomes return at the end).
func returnText(t int64) string {
	if t == math.MaxInt64 {
		return "∞"
	}
	return fmt.Sprintf("%.3fms", float64(t)/1e6)
}

// describeModel summarises a model state: leases, spots, records,
// descriptors and the renaming.
func describeModel(s *modelState) string {
	ctx := context.Background()
	st := s.store
	var b strings.Builder
	for _, o := range append(workloadOwners(), ttlOwner) {
		if l, err := st.ReadOwnerLease(ctx, o); err == nil && l.Kind == location.KindFound {
			fmt.Fprintf(&b, "  lease %s/%d\n", o, l.Token.LeaseGeneration)
		}
	}
	mesh := spotMesh
	if p, err := st.ListSpots(ctx, location.SpotFilter{MeshName: &mesh}, location.PageRequest{}); err == nil {
		for _, sp := range p.Items {
			fmt.Fprintf(&b, "  spot %s by %s/%d\n", sp.SpotID, sp.OwnerID, sp.LeaseGeneration)
		}
	}
	if p, err := st.ListMeshNodes(ctx, workloadMesh, location.PageRequest{}); err == nil {
		for _, d := range p.Items {
			fmt.Fprintf(&b, "  node %s rev %d state %v by %s/%d spots %+v\n", d.RID, d.DescriptorRevision, d.State,
				d.OwnerID, d.LeaseGeneration, d.PopulationCapacity.Spots)
		}
	}
	if r, err := st.ListAuthorities(ctx, "", "", 1000); err == nil {
		for _, e := range r.Items {
			res := ""
			if e.Snapshot.PendingCreation != nil {
				res = " reservation " + short(e.Snapshot.PendingCreation.ReservationID)
			}
			fmt.Fprintf(&b, "  record %s v%s %s by %s/%d on %s%s\n", e.Key, e.Snapshot.StoreVersion, e.Snapshot.Allocation.State,
				e.Snapshot.Owner.OwnerID, e.Snapshot.Owner.LeaseGeneration, e.Snapshot.Allocation.Descriptor.RID, res)
		}
	}
	fmt.Fprintf(&b, "  renaming (model → store): %s\n", s.ren)
	return b.String()
}

package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// WriteJSON writes the snapshot's sections as one indented JSON object.
func WriteJSON(w io.Writer, s *Snapshot) error {
	out := map[string]any{"prefix": s.Prefix, "revision": s.Revision, "readAt": s.ReadAt}
	if s.Serializable {
		out["serializable"] = true
	}
	put := func(sec Section, name string, v any) {
		if s.Has(sec) {
			out[name] = v
		}
	}
	put(SectionMeshNodes, "meshNodes", nonNil(s.MeshNodes))
	put(SectionClientServers, "clientServers", nonNil(s.ClientServers))
	put(SectionFanoutPublishers, "fanoutPublishers", nonNil(s.FanoutPublishers))
	put(SectionPeers, "peers", nonNil(s.Peers))
	put(SectionSpots, "spots", nonNil(s.Spots))
	put(SectionActors, "actors", nonNil(s.Actors))
	put(SectionRoutes, "routes", nonNil(s.Routes))
	put(SectionOwnerLeases, "ownerLeases", nonNil(s.OwnerLeases))
	put(SectionAuthorities, "authorities", nonNil(s.Authorities))
	put(SectionOther, "otherKeys", nonNil(s.Other))
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("inspect: write json: %w", err)
	}
	return nil
}

// nonNil makes a nil slice encode as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteTables writes one titled table per section of the snapshot.
func WriteTables(w io.Writer, s *Snapshot) error {
	tw := &tableWriter{w: w}
	tw.linef("prefix %s at revision %d (%s)", s.Prefix, s.Revision, s.ReadAt.Format(time.RFC3339))
	if s.Serializable {
		tw.linef("serializable read: one member's copy, possibly stale; the time leases have left is not asked")
	}
	for _, sec := range s.Sections {
		switch sec {
		case SectionMeshNodes:
			tw.meshNodes(s.MeshNodes)
		case SectionClientServers:
			tw.clientServers(s.ClientServers)
		case SectionFanoutPublishers:
			tw.fanout(s.FanoutPublishers)
		case SectionPeers:
			tw.peers(s.Peers)
		case SectionSpots:
			tw.spots(s.Spots)
		case SectionActors:
			tw.actors(s.Actors)
		case SectionRoutes:
			tw.routes(s.Routes)
		case SectionOwnerLeases:
			tw.leases(s.OwnerLeases)
		case SectionAuthorities:
			tw.authorities(s.Authorities)
		case SectionOther:
			tw.other(s.Other)
		}
	}
	return tw.err
}

// tableWriter writes titled tables and keeps the first error.
type tableWriter struct {
	w   io.Writer
	err error
}

// linef writes one line.
func (t *tableWriter) linef(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format+"\n", args...)
	}
}

// table writes a blank line, the title with the row count, and the rows
// under the header (or "(none)").
func (t *tableWriter) table(title string, header []string, rows [][]string) {
	t.linef("")
	t.linef("%s (%d)", title, len(rows))
	if len(rows) == 0 {
		t.linef("  (none)")
		return
	}
	tw := tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
	write := func(cells []string) {
		if t.err == nil {
			_, t.err = fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
		}
	}
	write(header)
	for _, r := range rows {
		write(r)
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// writeRows writes one titled table of rows, each rendered by cells.
func writeRows[T any](t *tableWriter, title string, header []string, rows []T, cells func(T) []string) {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, cells(r))
	}
	t.table(title, header, out)
}

// yesNo renders a liveness flag.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// itoa renders an integer.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// usage renders a population capacity as active/reserved/limit.
func usage(c location.PopulationCapacity) string {
	return fmt.Sprintf("%d/%d/%d", c.Active, c.Reserved, c.Limit)
}

// stateName renders a runtime state.
func stateName(s location.RuntimeState) string {
	switch s {
	case location.StatePreparing:
		return "preparing"
	case location.StateServing:
		return "serving"
	case location.StateRelocating:
		return "relocating"
	case location.StateRelocated:
		return "relocated"
	case location.StateDraining:
		return "draining"
	case location.StateStopped:
		return "stopped"
	case location.StateError:
		return "error"
	default:
		return "state(" + strconv.Itoa(int(s)) + ")"
	}
}

// routeKindName renders a route kind.
func routeKindName(k location.RouteKind) string {
	switch k {
	case location.RouteActorSession:
		return "actor-session"
	case location.RouteSpotName:
		return "spot-name"
	case location.RouteFrameworkRoute:
		return "framework-route"
	default:
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// ridText renders an optional routing id.
func ridText(r *location.RoutingID) string {
	if r == nil {
		return "-"
	}
	return r.String()
}

func (t *tableWriter) meshNodes(rows []Row[location.MeshNodeDescriptor]) {
	writeRows(t, "MESH NODES", []string{"MESH", "RID", "LIFECYCLE", "REVISION", "ENDPOINT", "ROLE", "STATE", "ACTORS a/r/max", "SPOTS a/r/max", "OWNER", "LEASE GEN", "LIVE"}, rows, func(r Row[location.MeshNodeDescriptor]) []string {
		d := r.Value
		return []string{d.MeshName, d.RID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
			string(d.ObjectRole), stateName(d.State), usage(d.PopulationCapacity.Actors), usage(d.PopulationCapacity.Spots),
			d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) clientServers(rows []Row[location.ClientServerDescriptor]) {
	writeRows(t, "CLIENT SERVERS", []string{"CHANNEL", "SERVER RID", "LIFECYCLE", "REVISION", "ENDPOINT", "WEIGHT", "STATE", "OWNER", "LEASE GEN", "LIVE"}, rows, func(r Row[location.ClientServerDescriptor]) []string {
		d := r.Value
		return []string{d.ChannelName, d.ServerRID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
			itoa(d.Weight), stateName(d.State), d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) fanout(rows []Row[location.FanoutPublisherDescriptor]) {
	writeRows(t, "FANOUT PUBLISHERS", []string{"CHANNEL", "PUBLISHER RID", "LIFECYCLE", "REVISION", "ENDPOINT", "STATE", "OWNER", "LEASE GEN", "LIVE"}, rows, func(r Row[location.FanoutPublisherDescriptor]) []string {
		d := r.Value
		return []string{d.ChannelName, d.PublisherRID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
			stateName(d.State), d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) peers(rows []Row[location.PeerLocation]) {
	writeRows(t, "PEERS", []string{"TYPE", "MESH", "ROLE", "RID", "ENDPOINT", "WEIGHT", "DRAINING", "OWNER", "GEN", "LIVE"}, rows, func(r Row[location.PeerLocation]) []string {
		p := r.Value
		return []string{p.AutoConnectType.String(), p.MeshName, p.Role.String(), ridText(p.NodeRID), p.Endpoint,
			itoa(p.Weight), yesNo(p.Draining), p.OwnerID, itoa(r.Generation), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) spots(rows []Row[location.SpotLocation]) {
	writeRows(t, "SPOTS", []string{"MESH", "SPOT", "TYPE", "KIND", "NODE", "NODE GEN", "OWNER", "LEASE GEN", "GEN", "LIVE"}, rows, func(r Row[location.SpotLocation]) []string {
		s := r.Value
		return []string{s.MeshName, s.SpotID, s.SpotType, string(s.SpotKind), s.OwnerNodeRID.String(),
			itoa(s.OwnerNodeGeneration), s.OwnerID, itoa(s.LeaseGeneration), itoa(r.Generation), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) actors(rows []Row[location.ActorLocation]) {
	writeRows(t, "ACTORS", []string{"MESH", "ACTOR", "TYPE", "NODE", "NODE GEN", "SPOT", "OWNER", "LEASE GEN", "GEN", "LIVE"}, rows, func(r Row[location.ActorLocation]) []string {
		a := r.Value
		return []string{a.MeshName, a.ActorID, a.ActorType, a.OwnerNodeRID.String(), itoa(a.OwnerNodeGeneration),
			string(a.SpotKind) + ":" + a.SpotID, a.OwnerID, itoa(a.LeaseGeneration), itoa(r.Generation), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) routes(rows []Row[location.RouteLocation]) {
	writeRows(t, "ROUTES", []string{"KIND", "KEY", "NODE", "OWNER", "GEN", "VALUE BYTES", "LIVE"}, rows, func(r Row[location.RouteLocation]) []string {
		rt := r.Value
		return []string{routeKindName(rt.RouteKind), rt.RouteKey, rt.OwnerNodeRID.String(), rt.OwnerID,
			itoa(r.Generation), strconv.Itoa(len(rt.Value)), yesNo(r.OwnerLive)}
	})
}

func (t *tableWriter) leases(rows []OwnerLease) {
	writeRows(t, "OWNER LEASES", []string{"OWNER", "GENERATION", "ETCD LEASE", "TTL", "REMAINING", "EXPIRES AT (store clock)"}, rows, func(l OwnerLease) []string {
		remaining := "expired"
		switch {
		case l.RemainingUnknown:
			remaining = "unknown"
		case l.RemainingSeconds >= 0:
			remaining = (time.Duration(l.RemainingSeconds) * time.Second).String()
		}
		expires := "unknown"
		if !l.ExpiresAt.IsZero() {
			expires = l.ExpiresAt.Format(time.RFC3339)
		}
		return []string{l.OwnerID, itoa(l.Generation), l.LeaseID, (time.Duration(l.TTLMs) * time.Millisecond).String(),
			remaining, expires}
	})
}

func (t *tableWriter) authorities(rows []Authority) {
	writeRows(t, "AUTHORITIES", []string{"KEY", "VERSION", "STATE", "KIND", "TYPE", "NODE", "LIFECYCLE", "OWNER", "LEASE GEN", "OBJECT GEN", "OWNER GEN", "LIVE"}, rows, func(a Authority) []string {
		al := a.Allocation
		return []string{string(a.Key), string(a.StoreVersion), string(al.State), string(al.ObjectKind), al.StableType,
			al.Descriptor.MeshName + "/" + al.Descriptor.RID.String(), itoa(al.DescriptorLifecycleGeneration),
			a.Owner.OwnerID, itoa(a.Owner.LeaseGeneration), itoa(a.ObjectGeneration), itoa(a.AuthorityOwnerGeneration), yesNo(a.OwnerLive)}
	})
}

func (t *tableWriter) other(rows []KeyCount) {
	writeRows(t, "OTHER KEYS", []string{"PART", "KEYS"}, rows, func(c KeyCount) []string {
		return []string{c.Part, itoa(c.Keys)}
	})
}

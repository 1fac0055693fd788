package inspect

import (
	"context"
	"strconv"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// sectionSpec is everything the package does with one section: where a
// Snapshot keeps it and under which name WriteJSON writes it, how Read
// fills it and how WriteTables renders it.
type sectionSpec struct {
	name Section
	// json is the section's member in WriteJSON's object.
	json string
	// value is the section's rows in snap (a nil slice as an empty one).
	value func(snap *Snapshot) any
	// read fills the section of snap.
	read func(ctx context.Context, r *Reader, snap *Snapshot, in readInput) error
	// render writes the section's table.
	render func(t *tableWriter, snap *Snapshot)
}

// readInput is what Read has found before it reads the sections: the owner
// leases (whose read fixes the snapshot's revision) and the owners that
// hold one.
type readInput struct {
	owners []OwnerLease
	live   map[string]bool
}

// section is the spec of a section whose rows (of type T) snap keeps in
// *field(snap), read by read and rendered as the table title with one row
// of cells per row under header.
func section[T any](name Section, json string, field func(snap *Snapshot) *[]T,
	read func(ctx context.Context, r *Reader, snap *Snapshot, in readInput) ([]T, error),
	title string, header []string, cells func(T) []string,
) sectionSpec {
	return sectionSpec{
		name:  name,
		json:  json,
		value: func(snap *Snapshot) any { return nonNil(*field(snap)) },
		read: func(ctx context.Context, r *Reader, snap *Snapshot, in readInput) error {
			rows, err := read(ctx, r, snap, in)
			*field(snap) = rows
			return err
		},
		render: func(t *tableWriter, snap *Snapshot) { writeRows(t, title, header, *field(snap), cells) },
	}
}

// tableRows reads the rows of a location table at the snapshot's revision.
func tableRows[T any](table location.Table) func(ctx context.Context, r *Reader, snap *Snapshot, in readInput) ([]Row[T], error) {
	return func(ctx context.Context, r *Reader, snap *Snapshot, in readInput) ([]Row[T], error) {
		return readTable[T](ctx, r, snap.Revision, table, in.live)
	}
}

// sectionSpecs is the catalogue of the sections, in display order.
func sectionSpecs() []sectionSpec {
	return []sectionSpec{
		section(SectionMeshNodes, "meshNodes", func(s *Snapshot) *[]Row[location.MeshNodeDescriptor] { return &s.MeshNodes },
			readMeshNodes,
			"MESH NODES", []string{"MESH", "RID", "LIFECYCLE", "REVISION", "ENDPOINT", "ROLE", "STATE", "ACTORS a/r/max", "SPOTS a/r/max", "OWNER", "LEASE GEN", "LIVE"},
			func(r Row[location.MeshNodeDescriptor]) []string {
				d := r.Value
				return []string{d.MeshName, d.RID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
					string(d.ObjectRole), d.State.String(), usage(d.PopulationCapacity.Actors), usage(d.PopulationCapacity.Spots),
					d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
			}),
		section(SectionClientServers, "clientServers", func(s *Snapshot) *[]Row[location.ClientServerDescriptor] { return &s.ClientServers },
			tableRows[location.ClientServerDescriptor](location.TableClientServers),
			"CLIENT SERVERS", []string{"CHANNEL", "SERVER RID", "LIFECYCLE", "REVISION", "ENDPOINT", "WEIGHT", "STATE", "OWNER", "LEASE GEN", "LIVE"},
			func(r Row[location.ClientServerDescriptor]) []string {
				d := r.Value
				return []string{d.ChannelName, d.ServerRID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
					itoa(d.Weight), d.State.String(), d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
			}),
		section(SectionFanoutPublishers, "fanoutPublishers", func(s *Snapshot) *[]Row[location.FanoutPublisherDescriptor] { return &s.FanoutPublishers },
			tableRows[location.FanoutPublisherDescriptor](location.TableFanoutPublishers),
			"FANOUT PUBLISHERS", []string{"CHANNEL", "PUBLISHER RID", "LIFECYCLE", "REVISION", "ENDPOINT", "STATE", "OWNER", "LEASE GEN", "LIVE"},
			func(r Row[location.FanoutPublisherDescriptor]) []string {
				d := r.Value
				return []string{d.ChannelName, d.PublisherRID.String(), itoa(d.LifecycleGeneration), itoa(d.DescriptorRevision), d.Endpoint,
					d.State.String(), d.OwnerID, itoa(d.LeaseGeneration), yesNo(r.OwnerLive)}
			}),
		section(SectionPeers, "peers", func(s *Snapshot) *[]Row[location.PeerLocation] { return &s.Peers },
			tableRows[location.PeerLocation](location.TablePeers),
			"PEERS", []string{"TYPE", "MESH", "ROLE", "RID", "ENDPOINT", "WEIGHT", "DRAINING", "OWNER", "GEN", "LIVE"},
			func(r Row[location.PeerLocation]) []string {
				p := r.Value
				return []string{p.AutoConnectType.String(), p.MeshName, p.Role.String(), ridText(p.NodeRID), p.Endpoint,
					itoa(p.Weight), yesNo(p.Draining), p.OwnerID, itoa(r.Generation), yesNo(r.OwnerLive)}
			}),
		section(SectionSpots, "spots", func(s *Snapshot) *[]Row[location.SpotLocation] { return &s.Spots },
			tableRows[location.SpotLocation](location.TableSpots),
			"SPOTS", []string{"MESH", "SPOT", "TYPE", "KIND", "NODE", "NODE GEN", "OWNER", "LEASE GEN", "GEN", "LIVE"},
			func(r Row[location.SpotLocation]) []string {
				s := r.Value
				return []string{s.MeshName, s.SpotID, s.SpotType, string(s.SpotKind), s.OwnerNodeRID.String(),
					itoa(s.OwnerNodeGeneration), s.OwnerID, itoa(s.LeaseGeneration), itoa(r.Generation), yesNo(r.OwnerLive)}
			}),
		section(SectionActors, "actors", func(s *Snapshot) *[]Row[location.ActorLocation] { return &s.Actors },
			tableRows[location.ActorLocation](location.TableActors),
			"ACTORS", []string{"MESH", "ACTOR", "TYPE", "NODE", "NODE GEN", "SPOT", "OWNER", "LEASE GEN", "GEN", "LIVE"},
			func(r Row[location.ActorLocation]) []string {
				a := r.Value
				return []string{a.MeshName, a.ActorID, a.ActorType, a.OwnerNodeRID.String(), itoa(a.OwnerNodeGeneration),
					string(a.SpotKind) + ":" + a.SpotID, a.OwnerID, itoa(a.LeaseGeneration), itoa(r.Generation), yesNo(r.OwnerLive)}
			}),
		section(SectionRoutes, "routes", func(s *Snapshot) *[]Row[location.RouteLocation] { return &s.Routes },
			tableRows[location.RouteLocation](location.TableRoutes),
			"ROUTES", []string{"KIND", "KEY", "NODE", "OWNER", "GEN", "VALUE BYTES", "LIVE"},
			func(r Row[location.RouteLocation]) []string {
				rt := r.Value
				return []string{rt.RouteKind.String(), rt.RouteKey, rt.OwnerNodeRID.String(), rt.OwnerID,
					itoa(r.Generation), strconv.Itoa(len(rt.Value)), yesNo(r.OwnerLive)}
			}),
		section(SectionOwnerLeases, "ownerLeases", func(s *Snapshot) *[]OwnerLease { return &s.OwnerLeases },
			func(ctx context.Context, r *Reader, _ *Snapshot, in readInput) ([]OwnerLease, error) {
				return in.owners, r.fillRemaining(ctx, in.owners)
			},
			"OWNER LEASES", []string{"OWNER", "GENERATION", "ETCD LEASE", "TTL", "REMAINING", "EXPIRES AT (store clock)"},
			leaseCells),
		section(SectionAuthorities, "authorities", func(s *Snapshot) *[]Authority { return &s.Authorities },
			func(ctx context.Context, r *Reader, _ *Snapshot, in readInput) ([]Authority, error) {
				return r.readAuthorities(ctx, in.live)
			},
			"AUTHORITIES", []string{"KEY", "VERSION", "STATE", "KIND", "TYPE", "NODE", "LIFECYCLE", "OWNER", "LEASE GEN", "OBJECT GEN", "OWNER GEN", "LIVE"},
			func(a Authority) []string {
				al := a.Allocation
				return []string{string(a.Key), string(a.StoreVersion), string(al.State), string(al.ObjectKind), al.StableType,
					al.Descriptor.MeshName + "/" + al.Descriptor.RID.String(), itoa(al.DescriptorLifecycleGeneration),
					a.Owner.OwnerID, itoa(a.Owner.LeaseGeneration), itoa(a.ObjectGeneration), itoa(a.AuthorityOwnerGeneration), yesNo(a.OwnerLive)}
			}),
		section(SectionOther, "otherKeys", func(s *Snapshot) *[]KeyCount { return &s.Other },
			func(ctx context.Context, r *Reader, snap *Snapshot, _ readInput) ([]KeyCount, error) {
				return r.countOther(ctx, snap.Revision)
			},
			"OTHER KEYS", []string{"PART", "KEYS"},
			func(c KeyCount) []string { return []string{c.Part, itoa(c.Keys)} }),
	}
}

// specOf returns the catalogue's spec of sec.
func specOf(sec Section) (sectionSpec, bool) {
	for _, spec := range sectionSpecs() {
		if spec.name == sec {
			return spec, true
		}
	}
	return sectionSpec{}, false
}

// readMeshNodes reads the mesh-node rows and replaces their usage with the
// store's (fillUsage).
func readMeshNodes(ctx context.Context, r *Reader, snap *Snapshot, in readInput) ([]Row[location.MeshNodeDescriptor], error) {
	rows, err := readTable[location.MeshNodeDescriptor](ctx, r, snap.Revision, location.TableMeshNodes, in.live)
	if err != nil {
		return rows, err
	}
	return rows, r.fillUsage(ctx, rows)
}

// leaseCells renders one owner lease.
func leaseCells(l OwnerLease) []string {
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
}

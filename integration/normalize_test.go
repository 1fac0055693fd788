package integration

import (
	"fmt"
	"reflect"
	"time"

	"github.com/zlink-systems/zlink-etcd/conformance"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Normalising a result: the renamed numbers are taken out (in a fixed
// order) and replaced by zero, so that two results agree when their shapes
// are deeply equal and their numbers bind pairwise.

// number is one renamed value found in an output (or input): an integer or,
// with str set, a text, of namespace ns (a conformance.Renamer namespace).
type number struct {
	ns      string
	ordered bool
	str     bool
	i       int64
	s       string
}

// bind records or checks one pair of numbers in r; it returns a
// description of the inconsistency, or "".
func bind(r *conformance.Renamer, m, s number) string {
	if m.ns != s.ns || m.str != s.str {
		return fmt.Sprintf("namespaces differ: %s / %s", m.ns, s.ns)
	}
	var err error
	if m.str {
		err = r.BindText(m.ns, m.s, s.s)
	} else {
		err = r.BindNumber(m.ns, m.ordered, m.i, s.i)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// shaper collects the numbers of one result.
type shaper struct{ nums []number }

// int takes out an integer of namespace ns.
func (s *shaper) int(ns string, ordered bool, p *int64) {
	s.nums = append(s.nums, number{ns: ns, ordered: ordered, i: *p})
	*p = 0
}

// str takes out a text of namespace ns.
func (s *shaper) str(ns string, p *string) {
	s.nums = append(s.nums, number{ns: ns, str: true, s: *p})
	*p = ""
}

// token takes out a token's lease generation.
func (s *shaper) token(t *location.OwnerToken) { s.int(conformance.NSLease, true, &t.LeaseGeneration) }

// snapshot takes the numbers out of an authority snapshot (a copy).
func (s *shaper) snapshot(key string, in *location.AuthoritySnapshot) *location.AuthoritySnapshot {
	if in == nil {
		return nil
	}
	c := *in
	v := string(c.StoreVersion)
	s.str(conformance.NSVersion(key), &v)
	c.StoreVersion = location.StoreVersion(v)
	s.int(conformance.NSObjectGeneration(key), true, &c.ObjectGeneration)
	s.int(conformance.NSOwnerGeneration(key), true, &c.AuthorityOwnerGeneration)
	s.token(&c.Owner)
	if c.PendingCreation != nil {
		p := *c.PendingCreation
		s.str(conformance.NSReservation, &p.ReservationID)
		c.PendingCreation = &p
	}
	return &c
}

// read takes the numbers out of a read result (a copy).
func (s *shaper) read(key string, in *location.AuthorityReadResult) *location.AuthorityReadResult {
	if in == nil {
		return nil
	}
	c := *in
	c.Snapshot = s.snapshot(key, c.Snapshot)
	return &c
}

// authKeyOf is the authority key of a creation key ("" if it has none).
func authKeyOf(k location.ObjectCreationKey) string {
	ak, err := location.EncodeAuthorityKey(k.Kind, k.GlobalID)
	if err != nil {
		return ""
	}
	return string(ak)
}

// shape returns the result of c without its renamed numbers, and the
// numbers.
func shape(c call, res any) (any, []number) {
	s := &shaper{}
	switch r := res.(type) {
	case nil:
		return nil, nil
	case location.OwnerLeaseClaimResult:
		s.token(&r.Token)
		return r, s.nums
	case location.OwnerLeaseReadResult:
		s.token(&r.Token)
		return r, s.nums
	case location.OwnerLeaseRenewResult, location.ResultKind, location.WriteStatus:
		return r, nil
	case location.WriteResult:
		switch c.kind {
		case opUpdateMeshNode:
			s.int(conformance.NSRowGeneration("meshNodes", string(c.desc.MeshName)+"/"+string(c.desc.RID)), true, &r.Generation)
		case opUpdateSpot:
			s.int(conformance.NSRowGeneration("spots", c.spot.MeshName+"/"+c.spot.SpotID), true, &r.Generation)
		case opUpdatePeer:
			s.int(peerGenerations(c.peer.MeshName, *c.peer.NodeRID), true, &r.Generation)
		}
		return r, s.nums
	case []location.PeerLocation:
		items := make([]location.PeerLocation, len(r))
		for i, p := range r {
			p := p.Clone()
			s.int(peerGenerations(p.MeshName, *p.NodeRID), true, &p.Generation)
			items[i] = p
		}
		return nilIfEmpty(items), s.nums
	case []location.OwnerLiveness:
		items := make([]location.OwnerLiveness, len(r))
		for i, l := range r {
			// Expiries are the model's alone (etcd reports none).
			l.LeaseExpiresAt, l.StoreNow = time.Time{}, time.Time{}
			if l.Live {
				s.token(&l.Token)
			}
			items[i] = l
		}
		return items, s.nums
	case location.Page[location.MeshNodeDescriptor]:
		items := make([]location.MeshNodeDescriptor, len(r.Items))
		for i, d := range r.Items {
			d := d.Clone()
			s.int(conformance.NSLease, true, &d.LeaseGeneration)
			items[i] = d
		}
		r.Items = nilIfEmpty(items)
		return r, s.nums
	case location.Page[location.SpotLocation]:
		items := make([]location.SpotLocation, len(r.Items))
		for i, sp := range r.Items {
			s.int(conformance.NSLease, true, &sp.LeaseGeneration)
			items[i] = sp
		}
		r.Items = nilIfEmpty(items)
		return r, s.nums
	case *location.SpotLocation:
		if r == nil {
			return r, nil
		}
		sp := *r
		s.int(conformance.NSLease, true, &sp.LeaseGeneration)
		return &sp, s.nums
	case location.ReserveResult:
		key := authKeyOf(c.reserve.Key)
		s.str(conformance.NSReservation, &r.ReservationID)
		r.Creating = s.snapshot(key, r.Creating)
		r.Current = s.read(key, r.Current)
		return r, s.nums
	case location.CommitResult:
		r.Ready = s.snapshot(authKeyOf(c.commit.Key), r.Ready)
		return r, s.nums
	case location.CompareExchangeResult:
		key := string(c.authKey)
		r.Stored = s.snapshot(key, r.Stored)
		v := string(r.DeletedVersion)
		s.str(conformance.NSVersion(key), &v)
		r.DeletedVersion = location.StoreVersion(v)
		r.Current = s.read(key, r.Current)
		return r, s.nums
	case location.AuthorityReadResult:
		return *s.read(string(c.authKey), &r), s.nums
	case location.AuthorityScanResult:
		items := make([]location.AuthorityEntry, len(r.Items))
		for i, e := range r.Items {
			e.Snapshot = *s.snapshot(string(e.Key), &e.Snapshot)
			items[i] = e
		}
		r.Items = nilIfEmpty(items)
		return r, s.nums
	}
	panic(fmt.Sprintf("integration: no shape for %T", res))
}

// agree compares the model's result with the store's under r (which it
// extends); it returns "" or what differs.
func agree(c call, model, store any, r *conformance.Renamer) string {
	ms, mn := shape(c, model)
	ss, sn := shape(c, store)
	if !reflect.DeepEqual(ms, ss) {
		return fmt.Sprintf("model %+v, store %+v", ms, ss)
	}
	if len(mn) != len(sn) {
		return fmt.Sprintf("model has %d numbers, store %d", len(mn), len(sn))
	}
	for i := range mn {
		if d := bind(r, mn[i], sn[i]); d != "" {
			return d
		}
	}
	return ""
}

// peerGenerations is the renamer namespace of a peer row's generations.
func peerGenerations(mesh string, rid location.RoutingID) string {
	return conformance.NSRowGeneration("peers", mesh+"/"+string(rid))
}

// nilIfEmpty makes an empty list nil (stores may answer either).
func nilIfEmpty[T any](items []T) []T {
	if len(items) == 0 {
		return nil
	}
	return items
}

package conformance

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// This file holds assertion helpers every scenario may use: store-issued
// numbers checked exactly or by relation (catalogue tags G, T, S), write
// results, input errors, row comparison, and "no effect" snapshots
// (catalogue §1).

// numRel is the relation a store-issued number must satisfy on a store that
// does not declare Capabilities.DenseCounters.
type numRel int

// Relations of numbers.
const (
	// relPositive: the number is at least 1.
	relPositive numRel = iota + 1
	// relEqual: the number equals Num.than.
	relEqual
	// relGreater: the number is strictly greater than Num.than.
	relGreater
)

// Num is the expectation on one store-issued number (a generation, a lease
// generation, a version): its exact value on a store with DenseCounters,
// and the catalogue's bracketed relation otherwise.
type Num struct {
	exact int64
	rel   numRel
	than  int64
}

// numPositive expects exact on an exact store and a value ≥ 1 otherwise
// ("[G: ≥ 1]").
func numPositive(exact int64) Num { return Num{exact: exact, rel: relPositive} }

// numEqual expects v on every store (a number the store returned before).
func numEqual(v int64) Num { return Num{exact: v, rel: relEqual, than: v} }

// numAbove expects exact on an exact store and a value strictly greater than
// than otherwise ("[G: > …]").
func numAbove(exact, than int64) Num { return Num{exact: exact, rel: relGreater, than: than} }

// String describes the expectation for failure messages.
func (n Num) String() string {
	switch n.rel {
	case relPositive:
		return fmt.Sprintf("%d (relational: ≥ 1)", n.exact)
	case relEqual:
		return fmt.Sprintf("%d (relational: = %d)", n.exact, n.than)
	default:
		return fmt.Sprintf("%d (relational: > %d)", n.exact, n.than)
	}
}

// expectNum checks a store-issued number against n.
func (c *Case) expectNum(got int64, n Num, what string, args ...any) {
	c.Helper()
	label := fmt.Sprintf(what, args...)
	if c.Caps.denseCounters() {
		require.Equalf(c, n.exact, got, "%s: want exactly %d", label, n.exact)
		return
	}
	switch n.rel {
	case relPositive:
		require.GreaterOrEqualf(c, got, int64(1), "%s: want ≥ 1", label)
	case relEqual:
		require.Equalf(c, n.than, got, "%s: want the earlier value %d", label, n.than)
	case relGreater:
		require.Greaterf(c, got, n.than, "%s: want > %d", label, n.than)
	}
}

// expectToken checks a continuation token: exact text on an exact store,
// presence otherwise; exact "" means "no token" on every store.
func (c *Case) expectToken(got, exact string, what string, args ...any) {
	c.Helper()
	label := fmt.Sprintf(what, args...)
	switch {
	case exact == "":
		require.Emptyf(c, got, "%s: want no continuation token", label)
	case c.Caps.decimalTokens():
		require.Equalf(c, exact, got, "%s: continuation token", label)
	default:
		require.NotEmptyf(c, got, "%s: want a continuation token", label)
	}
}

// expectStored checks a successful write result: status stored, the
// generation per gen, and updatedAt at.
func (c *Case) expectStored(res location.WriteResult, gen Num, at time.Time, what string, args ...any) {
	c.Helper()
	label := fmt.Sprintf(what, args...)
	require.Equalf(c, location.Stored, res.Status, "%s: status (result %+v)", label, res)
	c.expectNum(res.Generation, gen, "%s: generation", label)
	require.Truef(c, location.Millis(at).Equal(res.UpdatedAt), "%s: updatedAt %s, want %s", label, fmtTime(res.UpdatedAt), fmtTime(at))
}

// expectFailed checks a failed write result: the status, generation 0 and
// updatedAt at the Unix epoch (02 §0; LS-205).
func (c *Case) expectFailed(res location.WriteResult, status location.WriteStatus, what string, args ...any) {
	c.Helper()
	label := fmt.Sprintf(what, args...)
	require.Equalf(c, status, res.Status, "%s: status (result %+v)", label, res)
	require.Equalf(c, int64(0), res.Generation, "%s: a failed write carries generation 0", label)
	require.Truef(c, location.Epoch().Equal(res.UpdatedAt), "%s: a failed write carries updatedAt = epoch, got %s", label, fmtTime(res.UpdatedAt))
}

// expectInputError checks that err is an invalid-argument error of the class.
func (c *Case) expectInputError(err error, class location.ErrorClass, what string, args ...any) {
	c.Helper()
	label := fmt.Sprintf(what, args...)
	require.Errorf(c, err, "%s: want an invalid-argument error of class %s", label, class)
	require.Truef(c, errors.Is(err, location.ErrInvalidArgument), "%s: error %v does not wrap location.ErrInvalidArgument", label, err)
	ie, ok := location.AsInputError(err)
	require.Truef(c, ok, "%s: error %v is not a *location.InputError", label, err)
	require.Equalf(c, class, ie.Class, "%s: error class (error %v)", label, err)
}

// expectInputErrorCode is expectInputError plus the error's stable code.
func (c *Case) expectInputErrorCode(err error, class location.ErrorClass, code string, what string, args ...any) {
	c.Helper()
	c.expectInputError(err, class, what, args...)
	ie, _ := location.AsInputError(err)
	require.Equalf(c, code, ie.Code, "%s: error code (error %v)", fmt.Sprintf(what, args...), err)
}

// expectSameRow compares two values deeply after normalising them: times at
// millisecond precision in UTC, and empty slices and maps equal to nil (a
// store that encodes rows may not keep the difference).
func (c *Case) expectSameRow(want, got any, what string, args ...any) {
	c.Helper()
	require.Equalf(c, normalizeValue(want), normalizeValue(got), what, args...)
}

// fmtTime formats a time for failure messages.
func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// normalizeValue returns a deep copy of v in which every time.Time is
// truncated to milliseconds in UTC and every empty slice or map is nil.
func normalizeValue(v any) any {
	if v == nil {
		return nil
	}
	return normalizeReflect(reflect.ValueOf(v)).Interface()
}

// timeType is the reflect type of time.Time.
func timeType() reflect.Type { return reflect.TypeFor[time.Time]() }

func normalizeReflect(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(normalizeReflect(v.Elem()))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(normalizeReflect(v.Elem()))
		return out
	case reflect.Struct:
		if v.Type() == timeType() {
			t := v.Interface().(time.Time)
			return reflect.ValueOf(location.Millis(t))
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := 0; i < v.NumField(); i++ {
			if out.Field(i).CanSet() {
				out.Field(i).Set(normalizeReflect(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := 0; i < v.Len(); i++ {
			out.Index(i).Set(normalizeReflect(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), normalizeReflect(iter.Value()))
		}
		return out
	default:
		return v
	}
}

// stampScope names one change-stamp counter as the catalogue writes it:
// stamp(K, m) is {K.Scope(), m}; stamp(K) is {K.Scope(), ""}.
type stampScope struct {
	Kind location.ScopeKind
	Mesh string
}

// String renders the scope as the catalogue does.
func (s stampScope) String() string {
	if s.Mesh == "" {
		return fmt.Sprintf("stamp(%s)", s.Kind)
	}
	return fmt.Sprintf("stamp(%s, %s)", s.Kind, s.Mesh)
}

// stampOf is stamp(kind, mesh); mesh "" is the kind's global counter.
func stampOf(kind location.LocationKind, mesh string) stampScope {
	return stampScope{Kind: kind.Scope(), Mesh: mesh}
}

// readStamp reads one change stamp.
func (c *Case) readStamp(s stampScope) int64 {
	c.Helper()
	scope := location.ChangeStampScope{Kind: s.Kind}
	if s.Mesh != "" {
		m := s.Mesh
		scope.MeshName = &m
	}
	v, err := c.S.GetChangeStamp(c.Ctx, scope)
	require.NoErrorf(c, err, "GetChangeStamp(%s)", s)
	return v
}

// stampSet is a set of stamp readings.
type stampSet map[stampScope]int64

// readStamps reads every given scope.
func (c *Case) readStamps(scopes ...stampScope) stampSet {
	c.Helper()
	out := stampSet{}
	for _, s := range scopes {
		out[s] = c.readStamp(s)
	}
	return out
}

// expectStampDelta checks how a stamp moved between two readings: by exactly
// delta on an exact store; relationally "increased" (delta > 0) or
// "unchanged" (delta == 0).
func (c *Case) expectStampDelta(before, after stampSet, s stampScope, delta int64) {
	c.Helper()
	b, okB := before[s]
	a, okA := after[s]
	require.Truef(c, okB && okA, "%s was not read before and after", s)
	if c.Caps.exactStamps() || delta == 0 {
		require.Equalf(c, delta, a-b, "%s moved from %d to %d, want +%d", s, b, a, delta)
		return
	}
	require.Greaterf(c, a, b, "%s: want an increase (reference +%d), got %d → %d", s, delta, b, a)
}

// expectStamp checks a stamp's value on a store that started empty: exactly
// exact on an exact store; otherwise 0 when exact is 0 and positive when it
// is not.
func (c *Case) expectStamp(s stampScope, exact int64) {
	c.Helper()
	got := c.readStamp(s)
	if c.Caps.exactStamps() || exact == 0 {
		require.Equalf(c, exact, got, "%s", s)
		return
	}
	require.Positivef(c, got, "%s: want > 0 (reference %d)", s, exact)
}

// expectStampNow checks a stamp read now: it moved by delta since before
// (expectStampDelta) and stands at exact (expectStamp).
func (c *Case) expectStampNow(before stampSet, s stampScope, delta, exact int64) {
	c.Helper()
	c.expectStampDelta(before, c.readStamps(s), s, delta)
	c.expectStamp(s, exact)
}

// universe lists what a "no effect" snapshot reads: the meshes and channels
// whose descriptor lists and stamps it reads, the owners whose leases it
// reads and the transfer slots it resolves.
type universe struct {
	Meshes   []string
	Channels []string
	Owners   []string
	Slots    []location.ActorKey
}

// snapshot is everything the public reads of a universe return (catalogue
// §1 "No effect").
type snapshot struct {
	// u is what was read; a second snapshot reads the same.
	u                universe
	Peers            []location.PeerLocation
	Spots            []location.SpotLocation
	Actors           []location.ActorLocation
	Routes           []location.RouteLocation
	MeshNodes        map[string][]location.MeshNodeDescriptor
	ClientServers    map[string][]location.ClientServerDescriptor
	FanoutPublishers map[string][]location.FanoutPublisherDescriptor
	Leases           map[string]location.OwnerLeaseReadResult
	Stamps           map[string]int64
	Transfers        map[string]*location.ActorTransferRecord
}

// stampKinds are the scope kinds a snapshot reads, for the global scope and
// for every mesh and channel of the universe.
func stampKinds() []location.ScopeKind {
	return []location.ScopeKind{
		location.LocationPeer.Scope(), location.LocationSpot.Scope(), location.LocationActor.Scope(),
		location.LocationRoute.Scope(), location.LocationClientServer.Scope(),
		location.ScopeMeshNode, location.ScopeClientServer, location.ScopeSpot,
		location.ScopeAuthority, location.ScopeOwnerLease, location.ScopeFanoutPublisher,
	}
}

// takeSnapshot reads the universe through the store's public reads. Reading
// an owner lease may drop an expired entry on an in-memory store, so
// the scenarios that pin that (LS-019) take no snapshot.
func (c *Case) takeSnapshot(u universe) snapshot {
	c.Helper()
	var (
		s   snapshot
		err error
	)
	s.u = universe{
		Meshes: slices.Clone(u.Meshes), Channels: slices.Clone(u.Channels),
		Owners: slices.Clone(u.Owners), Slots: slices.Clone(u.Slots),
	}
	s.Peers, err = c.S.ListPeers(c.Ctx, location.PeerFilter{})
	require.NoError(c, err, "snapshot: ListPeers")
	sort.Slice(s.Peers, func(i, j int) bool { return peerOrderKey(s.Peers[i]) < peerOrderKey(s.Peers[j]) })
	sp, err := c.S.ListSpots(c.Ctx, location.SpotFilter{}, location.PageRequest{})
	require.NoError(c, err, "snapshot: ListSpots")
	s.Spots = sp.Items
	ap, err := c.S.ListActors(c.Ctx, location.ActorFilter{}, location.PageRequest{})
	require.NoError(c, err, "snapshot: ListActors")
	s.Actors = ap.Items
	rp, err := c.S.ListRoutes(c.Ctx, location.RouteFilter{}, location.PageRequest{})
	require.NoError(c, err, "snapshot: ListRoutes")
	s.Routes = rp.Items
	s.MeshNodes = map[string][]location.MeshNodeDescriptor{}
	names := append(append([]string{}, u.Meshes...), u.Channels...)
	for _, m := range u.Meshes {
		p, err := c.S.ListMeshNodes(c.Ctx, m, location.PageRequest{})
		require.NoErrorf(c, err, "snapshot: ListMeshNodes(%q)", m)
		s.MeshNodes[m] = p.Items
	}
	s.ClientServers = map[string][]location.ClientServerDescriptor{}
	s.FanoutPublishers = map[string][]location.FanoutPublisherDescriptor{}
	for _, ch := range u.Channels {
		p, err := c.S.ListClientServers(c.Ctx, ch, location.PageRequest{})
		require.NoErrorf(c, err, "snapshot: ListClientServers(%q)", ch)
		s.ClientServers[ch] = p.Items
		f, err := c.S.ListFanoutPublishers(c.Ctx, ch, location.PageRequest{})
		require.NoErrorf(c, err, "snapshot: ListFanoutPublishers(%q)", ch)
		s.FanoutPublishers[ch] = f.Items
	}
	s.Leases = map[string]location.OwnerLeaseReadResult{}
	for _, o := range u.Owners {
		if strings.TrimSpace(o) == "" {
			continue
		}
		r, err := c.S.ReadOwnerLease(c.Ctx, o)
		require.NoErrorf(c, err, "snapshot: ReadOwnerLease(%q)", o)
		s.Leases[o] = r
	}
	s.Stamps = map[string]int64{}
	for _, k := range stampKinds() {
		for _, m := range append([]string{""}, names...) {
			st := stampScope{Kind: k, Mesh: m}
			s.Stamps[st.String()] = c.readStamp(st)
		}
	}
	s.Transfers = map[string]*location.ActorTransferRecord{}
	for _, slot := range u.Slots {
		r, err := c.S.ResolveActorTransfer(c.Ctx, slot.MeshName, slot.ActorID)
		require.NoErrorf(c, err, "snapshot: ResolveActorTransfer(%q, %q)", slot.MeshName, slot.ActorID)
		s.Transfers[slot.MeshName+"/"+slot.ActorID] = r
	}
	return s
}

// expectNoEffect takes a second snapshot of before's universe and requires
// it to equal before.
func (c *Case) expectNoEffect(before snapshot, what string, args ...any) {
	c.Helper()
	after := c.takeSnapshot(before.u)
	require.Equalf(c, normalizeValue(before), normalizeValue(after), "%s: the call must have no effect", fmt.Sprintf(what, args...))
}

// peerOrderKey orders peer rows for comparison (ListPeers has no defined
// order).
func peerOrderKey(p location.PeerLocation) string {
	rid := "-"
	if p.NodeRID != nil {
		rid = "+" + p.NodeRID.Hex()
	}
	return fmt.Sprintf("%d\x00%s\x00%d\x00%s\x00%s", p.AutoConnectType, p.MeshName, p.Role, rid, p.Endpoint)
}

// expectTime requires got to be the same instant as want, at millisecond
// precision.
func (c *Case) expectTime(got, want time.Time, what string, args ...any) {
	c.Helper()
	require.Truef(c, location.Millis(want).Equal(location.Millis(got)), "%s: got %s, want %s", fmt.Sprintf(what, args...), fmtTime(got), fmtTime(want))
}

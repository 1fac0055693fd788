package conformance

import (
	"fmt"
	"reflect"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Comparison of the model's results with the store's, field by field. Every
// number a store may choose goes through the renamer (random_rename.go);
// everything else must be equal after normalisation (times at millisecond
// precision, empty slices and maps equal to absent ones).

// kind compares two result discriminators (kinds, statuses).
func (x *runState) kind(path string, m, s any) {
	if x.ok() && m != s && fmt.Sprint(m) != fmt.Sprint(s) {
		x.fail(ruleKind, "%s: model %q, store %q", path, fmt.Sprint(m), fmt.Sprint(s))
	}
}

// same requires two values to be equal after normalisation.
func (x *runState) same(path string, m, s any) {
	if !x.ok() {
		return
	}
	if where, mv, sv, differ := firstDiff(path, reflect.ValueOf(normalizeValue(m)), reflect.ValueOf(normalizeValue(s))); differ {
		x.fail(ruleField, "%s: model %s, store %s", where, mv, sv)
	}
}

// instant requires two times to be the same millisecond.
func (x *runState) instant(path string, m, s time.Time) {
	if x.ok() && !location.Millis(m).Equal(location.Millis(s)) {
		x.fail(ruleField, "%s: model %s, store %s", path, fmtTime(m), fmtTime(s))
	}
}

// num binds a renamed number of namespace ns.
func (x *runState) num(ns string, ordered bool, path string, m, s int64) {
	if !x.ok() {
		return
	}
	if err := x.names.BindNumber(ns, ordered, m, s); err != nil {
		x.fail(renameRule(err), "%s: %v", path, err)
	}
}

// str binds a renamed text of namespace ns.
func (x *runState) str(ns string, path string, m, s string) {
	if !x.ok() {
		return
	}
	if err := x.names.BindText(ns, m, s); err != nil {
		x.fail(renameRule(err), "%s: %v", path, err)
	}
}

// lease binds an owner-lease generation.
func (x *runState) lease(path string, m, s int64) { x.num(NSLease, true, path, m, s) }

// token compares continuation tokens: presence, or the text on an exact
// store.
func (x *runState) token(path, m, s string) {
	if !x.ok() {
		return
	}
	if x.caps.decimalTokens() {
		if m != s {
			x.fail(ruleToken, "%s: model %q, store %q (the store declares decimal tokens)", path, m, s)
		}
		return
	}
	if (m == "") != (s == "") {
		x.fail(ruleToken, "%s: model token %q, store token %q: more items remain on one store only", path, m, s)
	}
}

// stamp compares a change-stamp reading: the value on an exact store;
// otherwise whether it changed since the previous reading of the scope (0
// before the first), and it must never go back.
func (x *runState) stamp(scope string, m, s int64) {
	if !x.ok() {
		return
	}
	last := x.stamps[scope]
	x.stamps[scope] = stampPair{m: m, s: s}
	if x.caps.exactStamps() {
		if m != s {
			x.fail(ruleStamp, "%s: model %d, store %d (the store declares exact stamps)", scope, m, s)
		}
		return
	}
	if s < last.s {
		x.fail(ruleStamp, "%s went back on the store: %d after %d", scope, s, last.s)
		return
	}
	mChanged, sChanged := m != last.m, s != last.s
	if mChanged != sChanged {
		x.fail(ruleStamp, "%s since the previous reading: model %s (%d → %d), store %s (%d → %d)",
			scope, changedWord(mChanged), last.m, m, changedWord(sChanged), last.s, s)
	}
}

// changedWord is "changed" or "unchanged".
func changedWord(changed bool) string {
	if changed {
		return "changed"
	}
	return "unchanged"
}

// count requires two list lengths to be equal.
func (x *runState) count(path string, m, s int) bool {
	if x.ok() && m != s {
		x.fail(ruleField, "%s: model %d items, store %d items", path, m, s)
	}
	return x.ok()
}

// present requires two optional results to be both present or both absent;
// it reports whether both are present.
func (x *runState) present(path string, mNil, sNil bool) bool {
	if !x.ok() {
		return false
	}
	if mNil != sNil {
		x.fail(ruleField, "%s: model %s, store %s", path, presence(!mNil), presence(!sNil))
		return false
	}
	return !mNil
}

// presence is "present" or "absent".
func presence(p bool) string {
	if p {
		return "present"
	}
	return "absent"
}

// writeResult compares a row write result whose generation belongs to ns.
func (x *runState) writeResult(path, ns string, m, s location.WriteResult) {
	x.kind(path+".Status", m.Status, s.Status)
	x.num(ns, true, path+".Generation", m.Generation, s.Generation)
	x.instant(path+".UpdatedAt", m.UpdatedAt, s.UpdatedAt)
}

// ownerToken compares two owner tokens.
func (x *runState) ownerToken(path string, m, s location.OwnerToken) {
	x.lease(path+".LeaseGeneration", m.LeaseGeneration, s.LeaseGeneration)
	x.same(path+".OwnerID", m.OwnerID, s.OwnerID)
}

// snapshot compares two authority snapshots of key.
func (x *runState) snapshot(path string, key location.AuthorityKey, m, s *location.AuthoritySnapshot) {
	if !x.present(path, m == nil, s == nil) {
		return
	}
	k := string(key)
	x.str(NSVersion(k), path+".StoreVersion", string(m.StoreVersion), string(s.StoreVersion))
	x.num(NSObjectGeneration(k), true, path+".ObjectGeneration", m.ObjectGeneration, s.ObjectGeneration)
	x.num(NSOwnerGeneration(k), true, path+".AuthorityOwnerGeneration", m.AuthorityOwnerGeneration, s.AuthorityOwnerGeneration)
	x.lease(path+".Owner.LeaseGeneration", m.Owner.LeaseGeneration, s.Owner.LeaseGeneration)
	mc, sc := *m, *s
	mc.StoreVersion, sc.StoreVersion = "", ""
	mc.ObjectGeneration, sc.ObjectGeneration = 0, 0
	mc.AuthorityOwnerGeneration, sc.AuthorityOwnerGeneration = 0, 0
	mc.Owner.LeaseGeneration, sc.Owner.LeaseGeneration = 0, 0
	if x.present(path+".PendingCreation", m.PendingCreation == nil, s.PendingCreation == nil) {
		x.str(NSReservation, path+".PendingCreation.ReservationID", m.PendingCreation.ReservationID, s.PendingCreation.ReservationID)
		mp, sp := *m.PendingCreation, *s.PendingCreation
		mp.ReservationID, sp.ReservationID = "", ""
		mc.PendingCreation, sc.PendingCreation = &mp, &sp
	}
	x.same(path, mc, sc)
}

// readResult compares two authority read results of key.
func (x *runState) readResult(path string, key location.AuthorityKey, m, s *location.AuthorityReadResult) {
	if !x.present(path, m == nil, s == nil) {
		return
	}
	x.kind(path+".Kind", m.Kind, s.Kind)
	x.snapshot(path+".Snapshot", key, m.Snapshot, s.Snapshot)
	x.instant(path+".StoreNow", m.StoreNow, s.StoreNow)
}

// terminal compares two creation terminal records.
func (x *runState) terminal(path string, m, s *location.TerminalRecord) {
	if !x.present(path, m == nil, s == nil) {
		return
	}
	x.str(NSReservation, path+".ReservationID", m.ReservationID, s.ReservationID)
	mc, sc := *m, *s
	mc.ReservationID, sc.ReservationID = "", ""
	x.same(path, mc, sc)
}

// transferResult compares two actor-transfer write results.
func (x *runState) transferResult(path string, m, s location.ActorTransferWriteResult) {
	x.kind(path+".Status", m.Status, s.Status)
	x.same(path+".Record", m.Record, s.Record)
}

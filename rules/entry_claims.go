package rules

import (
	"fmt"

	"github.com/zlink-systems/zlink-etcd/location"
)

// Entry-spot identity claims (02 §2.2). A Server mesh node that advertises
// an entry spot id claims the id's user_spot authority key, so that no other
// descriptor advertises it and no authority reservation creates a spot with
// that id. Claims live in TableEntryClaims.
//
// Anomaly A-03 is fixed: a claim whose holder's exact owner lease (owner id
// and lease generation) is not live counts as free; it is replaced when a
// write claims the id again. Anomaly A-02 is fixed: a takeover that keeps the
// same entry spot does not release the claim it has just re-bound.

// EntryClaimKey returns the TableEntryClaims key of an entry spot id: its
// user_spot authority key.
func EntryClaimKey(entrySpotID string) (location.AuthorityKey, error) {
	key, err := location.EncodeAuthorityKey(location.ObjectUserSpot, entrySpotID)
	if err != nil {
		return "", fmt.Errorf("rules: entry spot %q: %w", entrySpotID, err)
	}
	return key, nil
}

// EntryClaimHeld returns the entry-spot claim on an authority key when it is
// held: it exists and its holder's exact owner lease is live. A claim whose
// holder is gone counts as free (anomaly A-03 fixed).
func EntryClaimHeld(tx *Tx, key location.AuthorityKey) (EntryClaim, bool) {
	claim, _, ok, err := readRow[EntryClaim](tx, TableEntryClaims, string(key))
	if err != nil || !ok {
		return EntryClaim{}, false
	}
	if !exactLeaseLive(tx, claim.OwnerID, claim.LeaseGeneration) {
		return EntryClaim{}, false
	}
	return claim, true
}

// claimEntrySpot takes or refreshes d's entry-spot claim; it reports false
// when another descriptor, owner or node incarnation holds the claim (and
// then plans nothing).
//
//  1. no entry spot: nothing to claim;
//  2. no claim, or a claim whose holder's exact lease is not live: a new
//     claim for d replaces it;
//  3. a held claim of another descriptor key, owner id or lifecycle: fail;
//  4. otherwise the claim is re-bound to d's lease generation.
func claimEntrySpot(tx *Tx, d *location.MeshNodeDescriptor) (bool, error) {
	if d.EntrySpotID == nil {
		return true, nil
	}
	key, err := EntryClaimKey(*d.EntrySpotID)
	if err != nil {
		return false, err
	}
	claim, held := EntryClaimHeld(tx, key)
	if held && (claim.Descriptor != d.Key() || claim.OwnerID != d.OwnerID || claim.LifecycleGeneration != d.LifecycleGeneration) {
		return false, nil
	}
	next := EntryClaim{Descriptor: d.Key(), OwnerID: d.OwnerID, LeaseGeneration: d.LeaseGeneration, LifecycleGeneration: d.LifecycleGeneration}
	if held && claim == next {
		return true, nil // already bound to this lease: nothing to write
	}
	tx.Put(TableEntryClaims, string(key), next, 0)
	return true, nil
}

// releaseEntrySpot deletes the claim of a removed or replaced row when the
// claim still matches that row exactly (owner id, lease generation and
// lifecycle generation; the descriptor key is not compared, as in the
// reference).
func releaseEntrySpot(tx *Tx, row *location.MeshNodeDescriptor) error {
	if row.EntrySpotID == nil {
		return nil
	}
	key, err := EntryClaimKey(*row.EntrySpotID)
	if err != nil {
		return err
	}
	claim, _, ok, err := readRow[EntryClaim](tx, TableEntryClaims, string(key))
	if err != nil || !ok {
		return err
	}
	if claim.OwnerID == row.OwnerID && claim.LeaseGeneration == row.LeaseGeneration && claim.LifecycleGeneration == row.LifecycleGeneration {
		tx.Delete(TableEntryClaims, string(key))
	}
	return nil
}

// replaceEntrySpot moves the claim from the replaced row cur to the new
// descriptor next on a takeover: claim for next first (false: conflict,
// nothing planned), then release cur's claim — unless both advertise the
// same entry spot, whose claim now belongs to next (anomaly A-02 fixed).
func replaceEntrySpot(tx *Tx, cur, next *location.MeshNodeDescriptor) (bool, error) {
	ok, err := claimEntrySpot(tx, next)
	if err != nil || !ok {
		return ok, err
	}
	if cur.EntrySpotID != nil && next.EntrySpotID != nil && *cur.EntrySpotID == *next.EntrySpotID {
		return true, nil
	}
	return true, releaseEntrySpot(tx, cur)
}

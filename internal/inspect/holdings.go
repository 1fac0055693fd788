package inspect

import (
	"cmp"
	"context"
	"slices"
)

// Holdings is what one owner id holds according to the owner index.
type Holdings struct {
	OwnerID string `json:"ownerId"`
	// Live says the owner holds an owner lease.
	Live bool `json:"live"`
	// Tables counts the owner's index entries per table.
	Tables map[string]int `json:"tables"`
	// Total counts every entry.
	Total int `json:"total"`
}

// Holdings reads the owner index and the owner leases at one revision and
// returns every owner that holds rows, sorted by owner id.
func (r *Reader) Holdings(ctx context.Context) ([]Holdings, error) {
	owners, rev, err := r.readOwners(ctx)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for _, o := range owners {
		live[o.OwnerID] = true
	}
	kvs, _, err := r.readRange(ctx, r.layout.ByOwnerPrefix(), rev, true)
	if err != nil {
		return nil, err
	}
	by := map[string]*Holdings{}
	for _, kv := range kvs {
		owner, table, _, ok := r.layout.SplitOwnerIndexKey(string(kv.Key))
		if !ok {
			continue
		}
		h := by[owner]
		if h == nil {
			h = &Holdings{OwnerID: owner, Live: live[owner], Tables: map[string]int{}}
			by[owner] = h
		}
		h.Tables[table]++
		h.Total++
	}
	out := make([]Holdings, 0, len(by))
	for _, h := range by {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b Holdings) int { return cmp.Compare(a.OwnerID, b.OwnerID) })
	return out, nil
}

package inspect

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
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
	by := map[string]*Holdings{}
	_, err = etcdstore.Scan(ctx, r.client, r.layout, etcdstore.ScanOwnerIndex(""), r.scanOptions(rev), func(e etcdstore.Entry) error {
		h := by[e.OwnerID]
		if h == nil {
			h = &Holdings{OwnerID: e.OwnerID, Live: live[e.OwnerID], Tables: map[string]int{}}
			by[e.OwnerID] = h
		}
		h.Tables[string(e.Table)]++
		h.Total++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("inspect: read the owner index: %w", err)
	}
	out := make([]Holdings, 0, len(by))
	for _, h := range by {
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b Holdings) int { return cmp.Compare(a.OwnerID, b.OwnerID) })
	return out, nil
}

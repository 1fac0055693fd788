package scratch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// ErrInUse is returned by RemoveAbandoned for a prefix whose marker
// exists.
var ErrInUse = errors.New("scratch: the prefix is in use (its marker exists)")

// Found is one scratch prefix on the cluster.
type Found struct {
	Prefix string
	// Purpose is the subcommand that made it (demo, check, bench).
	Purpose string
	// Keys counts the keys under the prefix, the marker included.
	Keys int64
	// InUse says the marker exists: a run works under the prefix, or left
	// it for a while on purpose (Marker.Kept).
	InUse bool
	// Marker is the marker's value when in use (zero when it cannot be
	// decoded).
	Marker MarkerValue
	// MarkerTTL is the seconds the marker's lease has left (0 when not in
	// use).
	MarkerTTL int64
}

// Abandoned reports whether the prefix has no marker.
func (f Found) Abandoned() bool { return !f.InUse }

// Find lists the scratch prefixes directly below base (which must end with
// '/'), in key order, with their key counts and whether they are in use.
// Keys below base whose segment is not a scratch name are ignored.
func Find(ctx context.Context, c Etcd, base string) ([]Found, error) {
	if !strings.HasSuffix(base, "/") {
		return nil, fmt.Errorf("scratch: base prefix %q must end with '/'", base)
	}
	from := base + NamePrefix
	end := keys.PrefixEnd(from)
	var out []Found
	for from < end {
		resp, err := c.Get(ctx, from, clientv3.WithRange(end), clientv3.WithLimit(1), clientv3.WithKeysOnly())
		if err != nil {
			return nil, fmt.Errorf("scratch: list %s*: %w", base+NamePrefix, err)
		}
		if len(resp.Kvs) == 0 {
			break
		}
		key := string(resp.Kvs[0].Key)
		segment, _, hasSlash := strings.Cut(key[len(base):], "/")
		next := base + segment
		if hasSlash {
			next += "/"
		}
		if _, _, ok := Parse(next); ok {
			f, err := Examine(ctx, c, next)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
		from = keys.PrefixEnd(next)
	}
	return out, nil
}

// Examine reports on one scratch prefix: its key count and its marker.
func Examine(ctx context.Context, c Etcd, prefix string) (Found, error) {
	_, purpose, ok := Parse(prefix)
	if !ok {
		return Found{}, fmt.Errorf("scratch: %q is not a scratch prefix", prefix)
	}
	f := Found{Prefix: prefix, Purpose: purpose}
	count, err := c.Get(ctx, prefix, clientv3.WithRange(keys.PrefixEnd(prefix)), clientv3.WithCountOnly())
	if err != nil {
		return Found{}, fmt.Errorf("scratch: count %s: %w", prefix, err)
	}
	f.Keys = count.Count
	marker, err := c.Get(ctx, MarkerKey(prefix))
	if err != nil {
		return Found{}, fmt.Errorf("scratch: read the marker of %s: %w", prefix, err)
	}
	if len(marker.Kvs) == 0 {
		return f, nil
	}
	kv := marker.Kvs[0]
	f.InUse = true
	_ = json.Unmarshal(kv.Value, &f.Marker)
	if kv.Lease != 0 {
		ttl, err := c.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			return Found{}, fmt.Errorf("scratch: read the marker lease of %s: %w", prefix, err)
		}
		f.MarkerTTL = max(ttl.TTL, 0)
	}
	return f, nil
}

// RemoveAbandoned removes an abandoned scratch prefix: it revokes the
// owner leases stored under it, then deletes every key under it in one
// transaction that requires the marker to be still absent. It returns how
// many keys it deleted, or an error wrapping ErrInUse when the prefix has
// a marker.
func RemoveAbandoned(ctx context.Context, c Etcd, prefix string) (int64, error) {
	if _, _, ok := Parse(prefix); !ok {
		return 0, fmt.Errorf("scratch: refusing to remove %q: not a scratch prefix", prefix)
	}
	marker := MarkerKey(prefix)
	resp, err := c.Get(ctx, marker, clientv3.WithCountOnly())
	if err != nil {
		return 0, fmt.Errorf("scratch: read the marker of %s: %w", prefix, err)
	}
	if resp.Count > 0 {
		return 0, fmt.Errorf("%s: %w", prefix, ErrInUse)
	}
	if err := revokeLeases(ctx, c, prefix); err != nil {
		return 0, err
	}
	tr, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(marker), "=", 0)).
		Then(clientv3.OpDelete(prefix, clientv3.WithRange(keys.PrefixEnd(prefix)))).
		Commit()
	if err != nil {
		return 0, fmt.Errorf("scratch: delete %s: %w", prefix, err)
	}
	if !tr.Succeeded {
		return 0, fmt.Errorf("%s: %w", prefix, ErrInUse)
	}
	return tr.Responses[0].GetResponseDeleteRange().Deleted, nil
}

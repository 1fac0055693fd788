// Package scratch hands out throw-away key prefixes on an etcd cluster and
// removes them again: the prefixes the command's demo, check and bench
// subcommands write under, so that they never touch an operator's data.
//
// A scratch prefix lives inside a base prefix (the --prefix the operator
// gave, so that a user whose etcd role is limited to that range can run the
// commands) and is named "<base>zlinketcd-<purpose>-<random>/". Its name
// holds a dash, which no table name of the store's key layout does, so it
// can never be mistaken for a table of a store rooted at the base.
//
// Cleaning a prefix revokes the etcd leases of the owner leases stored
// under it first (deleting an owner key does not end its etcd lease) and
// then deletes every key under it.
package scratch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
)

// NamePrefix starts the last segment of every scratch prefix.
const NamePrefix = "zlinketcd-"

// New returns a fresh scratch prefix for purpose (letters, digits and
// dashes) below base, which must end with '/'.
func New(base, purpose string) (string, error) {
	if !strings.HasSuffix(base, "/") {
		return "", fmt.Errorf("scratch: base prefix %q must end with '/'", base)
	}
	for _, r := range purpose {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return "", fmt.Errorf("scratch: purpose %q may only hold lower-case letters, digits and dashes", purpose)
		}
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("scratch: random name: %w", err)
	}
	return base + NamePrefix + purpose + "-" + hex.EncodeToString(b[:]) + "/", nil
}

// Sub returns the prefix of the n-th sub-store of a scratch prefix
// ("<prefix>s<n>/"), for runs that need many isolated stores.
func Sub(prefix string, n int) string { return prefix + "s" + strconv.Itoa(n) + "/" }

// Clean revokes the etcd lease of every owner lease stored under prefix, at
// any depth, and deletes every key under it. It returns how many keys it
// deleted. An empty prefix or "/" is refused: it would empty the cluster.
func Clean(ctx context.Context, c *clientv3.Client, prefix string) (int64, error) {
	if prefix == "" || prefix == "/" {
		return 0, fmt.Errorf("scratch: refusing to clean the prefix %q", prefix)
	}
	if err := revokeOwnerLeases(ctx, c, prefix); err != nil {
		return 0, err
	}
	resp, err := c.Delete(ctx, prefix, clientv3.WithRange(keys.PrefixEnd(prefix)))
	if err != nil {
		return 0, fmt.Errorf("scratch: delete %s: %w", prefix, err)
	}
	return resp.Deleted, nil
}

// ownerKeyMarker is the part of an owner-lease key that follows a store
// root (see keys.Layout.OwnerKey).
const ownerKeyMarker = "/owner/"

// revokeOwnerLeases revokes the lease of every owner-lease value under
// prefix. Values that are not owner leases are skipped; a lease that is
// already gone is not an error.
func revokeOwnerLeases(ctx context.Context, c *clientv3.Client, prefix string) error {
	end := keys.PrefixEnd(prefix)
	start := prefix
	seen := map[clientv3.LeaseID]bool{}
	for {
		resp, err := c.Get(ctx, start, clientv3.WithRange(end), clientv3.WithLimit(500))
		if err != nil {
			return fmt.Errorf("scratch: read %s: %w", prefix, err)
		}
		for _, kv := range resp.Kvs {
			if kv.Lease == 0 || !strings.Contains(string(kv.Key), ownerKeyMarker) {
				continue
			}
			var rec leasemap.Record
			if json.Unmarshal(kv.Value, &rec) != nil || rec.Format != leasemap.RecordFormat {
				continue
			}
			id := clientv3.LeaseID(kv.Lease)
			if seen[id] {
				continue
			}
			seen[id] = true
			if _, err := c.Revoke(ctx, id); err != nil && !isLeaseNotFound(err) {
				return fmt.Errorf("scratch: revoke lease %x: %w", int64(id), err)
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// isLeaseNotFound reports whether err says the lease no longer exists.
func isLeaseNotFound(err error) bool {
	return errors.Is(err, rpctypes.ErrLeaseNotFound) || strings.Contains(err.Error(), rpctypes.ErrLeaseNotFound.Error())
}

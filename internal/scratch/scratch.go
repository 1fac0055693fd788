// Package scratch hands out throw-away key prefixes on an etcd cluster,
// marks them in use while a command works under them, finds the ones a
// run abandoned and removes them: the prefixes the command's demo, check
// and bench subcommands write under, so that they never touch an
// operator's data and never leave anything behind for good.
//
// A scratch prefix lives inside a base prefix (the --prefix the operator
// gave, so that a user whose etcd role is limited to that range can run the
// commands) and is named "<base>zlinketcd-<purpose>-<8 hex digits>/". Its
// name holds a dash, which no table name of the store's key layout does, so
// it can never be mistaken for a table of a store rooted at the base.
//
// While a run works under a prefix it holds the prefix's marker (Claim):
// the key "<prefix>zlinketcd-run" on an etcd lease the run keeps alive. A
// prefix without a marker is abandoned: its run ended without removing it
// (a crash, a lost cluster, a kill) or left it on purpose for a while
// (demo --keep puts the marker on a lease that is not renewed). Find lists
// the scratch prefixes below a base and says which are abandoned;
// RemoveAbandoned removes one, atomically re-checking that no marker
// appeared.
//
// Cleaning a prefix revokes the etcd leases of the owner leases stored
// under it first (deleting an owner key does not end its etcd lease) and
// then deletes every key under it.
package scratch

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/etcdstore"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/leasemap"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// NamePrefix starts the last segment of every scratch prefix.
const NamePrefix = "zlinketcd-"

// Etcd is what the package needs of an etcd client: keys and leases.
// *clientv3.Client implements it.
type Etcd interface {
	clientv3.KV
	clientv3.Lease
}

// New returns a fresh scratch prefix for purpose (lower-case letters,
// digits and dashes) below base, which must end with '/'.
func New(base, purpose string) (string, error) {
	if !strings.HasSuffix(base, "/") {
		return "", fmt.Errorf("scratch: base prefix %q must end with '/'", base)
	}
	if purpose == "" {
		return "", fmt.Errorf("scratch: empty purpose")
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

// name matches the last segment of a scratch prefix, with its purpose.
var name = regexp.MustCompile(`^` + NamePrefix + `([a-z0-9-]+)-[0-9a-f]{8}/$`)

// Parse reports whether prefix is a scratch prefix (as New makes them) and
// returns its base and purpose.
func Parse(prefix string) (base, purpose string, ok bool) {
	i := strings.LastIndex(strings.TrimSuffix(prefix, "/"), "/")
	if i < 0 {
		return "", "", false
	}
	m := name.FindStringSubmatch(prefix[i+1:])
	if m == nil {
		return "", "", false
	}
	return prefix[:i+1], m[1], true
}

// Sub returns the prefix of the n-th sub-store of a scratch prefix
// ("<prefix>s<n>/"), for runs that need many isolated stores.
func Sub(prefix string, n int) string { return prefix + "s" + strconv.Itoa(n) + "/" }

// Clean revokes the etcd lease of every owner lease stored under prefix, at
// any depth, and of its marker, and deletes every key under it. It returns
// how many keys it deleted. An empty prefix or "/" is refused: it would
// empty the cluster.
func Clean(ctx context.Context, c Etcd, prefix string) (int64, error) {
	if err := checkPrefix(prefix); err != nil {
		return 0, err
	}
	if err := revokeLeases(ctx, c, prefix); err != nil {
		return 0, err
	}
	resp, err := c.Delete(ctx, prefix, clientv3.WithRange(keys.PrefixEnd(prefix)))
	if err != nil {
		return 0, fmt.Errorf("scratch: delete %s: %w", prefix, err)
	}
	return resp.Deleted, nil
}

// checkPrefix refuses prefixes whose removal would empty the cluster.
func checkPrefix(prefix string) error {
	if prefix == "" || prefix == "/" {
		return fmt.Errorf("scratch: refusing to clean the prefix %q", prefix)
	}
	return nil
}

// ownerKeyMarker is the part of an owner-lease key that follows a store
// root (see keys.Layout.OwnerKey).
const ownerKeyMarker = "/owner/"

// revokeLeases revokes the lease of every owner-lease value under prefix
// and of the prefix's marker. Values that are not owner leases are
// skipped; a lease that is already gone is not an error.
func revokeLeases(ctx context.Context, c Etcd, prefix string) error {
	seen := map[clientv3.LeaseID]bool{}
	marker := MarkerKey(prefix)
	var revokeErr error
	_, err := etcdstore.ScanRange(ctx, c, prefix, keys.PrefixEnd(prefix), etcdstore.ScanOptions{}, func(p etcdstore.ScanPage) (bool, error) {
		for _, kv := range p.KVs {
			id := clientv3.LeaseID(kv.Lease)
			if id == 0 || seen[id] || (string(kv.Key) != marker && !isOwnerRecord(string(kv.Key), kv.Value)) {
				continue
			}
			seen[id] = true
			if _, err := c.Revoke(ctx, id); err != nil && !txn.IsLeaseNotFound(err) {
				revokeErr = fmt.Errorf("scratch: revoke lease %x: %w", int64(id), err)
				return true, nil
			}
		}
		return false, nil
	})
	switch {
	case revokeErr != nil:
		return revokeErr
	case err != nil:
		return fmt.Errorf("scratch: read %s: %w", prefix, err)
	}
	return nil
}

// isOwnerRecord reports whether key and value are an owner lease.
func isOwnerRecord(key string, value []byte) bool {
	if !strings.Contains(key, ownerKeyMarker) {
		return false
	}
	_, err := leasemap.DecodeRecord(value)
	return err == nil
}

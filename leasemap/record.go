package leasemap

import (
	"encoding/json"
	"fmt"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zlink-systems/zlink-etcd/location"
)

// RecordFormat is the format tag of owner-lease values.
const RecordFormat = "zlink.ownerLease/v1"

// Record is the value of an owner-lease key.
type Record struct {
	Format  string `json:"format"`
	OwnerID string `json:"ownerId"`
	// TTLMs is the TTL the holder asked for, in milliseconds.
	TTLMs int64 `json:"ttlMs"`
	// ExpiresAtMs is the reported expiry (store clock, Unix milliseconds).
	ExpiresAtMs int64 `json:"expiresAtMs"`
	// LeaseID is the etcd lease id in hex, as etcdctl prints it.
	LeaseID string `json:"leaseId"`
	// LeaseSeconds is the TTL the etcd lease was granted with
	// (ceil(TTLMs / 1000), at least the store's minimum).
	LeaseSeconds int64 `json:"leaseSeconds"`
	// KeepAlive marks a lease renewed by keep-alives alone (Map.Keep): they
	// do not rewrite the value, so ExpiresAtMs is only the expiry as of the
	// last write, and the real one is the etcd lease's (Map.Read asks etcd
	// for its remaining TTL). Absent (false): ExpiresAtMs is the expiry.
	KeepAlive bool `json:"keepAlive,omitempty"`
	// Nonce identifies the write that stored this value (decision E-9).
	Nonce string `json:"nonce"`
}

// encodeRecord returns the JSON value of r.
func encodeRecord(r Record) (string, error) {
	r.Format = RecordFormat
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("%w: encode owner-lease value: %w", location.ErrInternal, err)
	}
	return string(b), nil
}

// DecodeRecord parses an owner-lease value: the one decoder of the format
// (tools read owner leases through etcdstore.Scan, which uses it). An
// undecodable value, or one of another format, is an error wrapping
// location.ErrInternal.
func DecodeRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: undecodable owner-lease value: %w", location.ErrInternal, err)
	}
	if r.Format != RecordFormat {
		return Record{}, fmt.Errorf("%w: owner-lease value has format %q, want %q", location.ErrInternal, r.Format, RecordFormat)
	}
	return r, nil
}

// mvccKV is a stored key-value as etcd returns it.
type mvccKV = mvccpb.KeyValue

// leaseIDText returns the hex text of an etcd lease id.
func leaseIDText(id clientv3.LeaseID) string { return strconv.FormatInt(int64(id), 16) }

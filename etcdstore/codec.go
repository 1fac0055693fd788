package etcdstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/txn"
)

// Values are stored as JSON envelopes (docs/key-layout.md):
//
//	{"format":"zlink.<table>/v1","generation":7,"writtenAtMs":1782950400000,
//	 "nonce":"…","value":{…the row…}}
//
// format names the table and the encoding version; generation is the row
// generation (0 for tables without one); writtenAtMs is the store clock when
// the value was written (for the garbage collector's age rules); nonce is the
// write nonce of the transaction (decision E-9). The value is the row as its
// Go type marshals it.

// formatVersion is the value encoding version every format tag ends with.
const formatVersion = "/v1"

// envelope is a stored value.
type envelope struct {
	Format      string          `json:"format"`
	Generation  int64           `json:"generation,omitempty"`
	WrittenAtMs int64           `json:"writtenAtMs"`
	Nonce       string          `json:"nonce"`
	Value       json.RawMessage `json:"value"`
}

// formatOf returns the format tag of a table's values.
func formatOf(t rules.Table) string { return "zlink." + string(t) + formatVersion }

// storedTables lists every table the store keeps, with the Go type of its
// values (the type rules.Record.Value holds).
func storedTables() []rules.Table {
	return []rules.Table{
		location.TableMeshNodes, location.TableClientServers, location.TableFanoutPublishers,
		location.TablePeers, location.TableSpots, location.TableActors, location.TableRoutes,
		rules.TableEntryClaims, rules.TableTransferRecords, rules.TableTransferActive,
		rules.TableAuthority, rules.TableLedger, rules.TableRelocations, rules.TableAggregates,
		rules.TableReservationTerminals, rules.TableOperationTerminals,
	}
}

// encodeValue encodes one table value. The authority row's StoreVersion is
// not stored: it is the key's ModRevision (decision E-4).
func encodeValue(t rules.Table, value any, generation int64, nonce string, now time.Time) ([]byte, error) {
	if row, ok := value.(rules.AuthorityRow); ok {
		row.StoreVersion = ""
		value = row
	}
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s value: %w", location.ErrInternal, t, err)
	}
	b, err := json.Marshal(envelope{Format: formatOf(t), Generation: generation, WrittenAtMs: now.UnixMilli(), Nonce: nonce, Value: raw})
	if err != nil {
		return nil, fmt.Errorf("%w: encode %s envelope: %w", location.ErrInternal, t, err)
	}
	return b, nil
}

// decodeRecord decodes an observed value of table t into the record the
// rules expect.
func decodeRecord(t rules.Table, o txn.Observation) (rules.Record, error) {
	var env envelope
	if err := json.Unmarshal(o.Value, &env); err != nil {
		return rules.Record{}, fmt.Errorf("%w: undecodable value at %q: %w", location.ErrInternal, o.Key, err)
	}
	if env.Format != formatOf(t) {
		return rules.Record{}, fmt.Errorf("%w: value at %q has format %q, want %q", location.ErrInternal, o.Key, env.Format, formatOf(t))
	}
	v, err := decodeValue(t, env.Value)
	if err != nil {
		return rules.Record{}, fmt.Errorf("%w: value at %q: %w", location.ErrInternal, o.Key, err)
	}
	if row, ok := v.(rules.AuthorityRow); ok {
		row.StoreVersion = versionOf(o.ModRevision)
		v = row
	}
	return rules.Record{Value: v, Generation: env.Generation}, nil
}

// writtenAt returns the time an observed value was written.
func writtenAt(o txn.Observation) (time.Time, error) {
	var env struct {
		WrittenAtMs int64 `json:"writtenAtMs"`
	}
	if err := json.Unmarshal(o.Value, &env); err != nil {
		return time.Time{}, fmt.Errorf("%w: undecodable value at %q: %w", location.ErrInternal, o.Key, err)
	}
	return time.UnixMilli(env.WrittenAtMs).UTC(), nil
}

// versionOf is the store version of a record whose ModRevision is rev.
func versionOf(rev int64) location.StoreVersion {
	return location.StoreVersion(strconv.FormatInt(rev, 10))
}

// decodeValue decodes the JSON of one value of table t into its Go type.
func decodeValue(t rules.Table, raw json.RawMessage) (any, error) {
	switch t {
	case location.TableMeshNodes:
		return decodeAs[location.MeshNodeDescriptor](raw)
	case location.TableClientServers:
		return decodeAs[location.ClientServerDescriptor](raw)
	case location.TableFanoutPublishers:
		return decodeAs[location.FanoutPublisherDescriptor](raw)
	case location.TablePeers:
		return decodeAs[location.PeerLocation](raw)
	case location.TableSpots:
		return decodeAs[location.SpotLocation](raw)
	case location.TableActors:
		return decodeAs[location.ActorLocation](raw)
	case location.TableRoutes:
		return decodeAs[location.RouteLocation](raw)
	case rules.TableEntryClaims:
		return decodeAs[rules.EntryClaim](raw)
	case rules.TableTransferRecords:
		return decodeAs[location.ActorTransferRecord](raw)
	case rules.TableTransferActive:
		return decodeAs[rules.TransferPointer](raw)
	case rules.TableAuthority:
		return decodeAs[rules.AuthorityRow](raw)
	case rules.TableLedger:
		return decodeAs[rules.LedgerEntry](raw)
	case rules.TableRelocations:
		return decodeAs[rules.RelocationRecord](raw)
	case rules.TableAggregates:
		return decodeAs[rules.AggregateRecord](raw)
	case rules.TableReservationTerminals:
		return decodeAs[rules.ReservationTerminal](raw)
	case rules.TableOperationTerminals:
		return decodeAs[location.TerminalRecord](raw)
	}
	return nil, fmt.Errorf("unknown table %q", t)
}

func decodeAs[T any](raw json.RawMessage) (any, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// indexValue is the value of an owner-index entry: the nonce alone.
func indexValue(nonce string) []byte {
	return []byte(`{"format":"zlink.ownerIndex/v1","nonce":"` + nonce + `"}`)
}

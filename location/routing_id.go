package location

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// RoutingID identifies a node or socket on the transport. It holds the raw
// bytes of the id: for a text id, its UTF-8 text; for an opaque transport id,
// its bytes (which need not be valid UTF-8). Two ids are equal when their bytes
// are equal, so a text id and an opaque id with the same bytes are equal (the
// reference's storage-hex equality).
type RoutingID string

// Hex returns the lower-case hex of the id's bytes (the reference's storage
// hex). Hex order equals byte order.
func (r RoutingID) Hex() string { return hex.EncodeToString([]byte(r)) }

// IsText reports whether the id is valid UTF-8 without C0/C1 control
// characters or DEL, that is, whether it reads as text.
func (r RoutingID) IsText() bool { return keys.IsTextRoutingID(string(r)) }

// String returns the text of a text id and "hex:<hex>" for an opaque id.
func (r RoutingID) String() string {
	if r.IsText() {
		return string(r)
	}
	return "hex:" + r.Hex()
}

// RoutingIDFromHex decodes a storage hex (even length, [0-9a-fA-F]+, not
// empty) into an id.
func RoutingIDFromHex(h string) (RoutingID, error) {
	if h == "" || len(h)%2 != 0 {
		return "", NewTypeError("routing_id.hex", "routing id hex %q must be non-empty and of even length", h)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", NewTypeError("routing_id.hex", "routing id hex %q is not hexadecimal", h)
	}
	return RoutingID(b), nil
}

// RoutingIDsEqual is the reference's equality of optional ids: both absent are
// equal, one absent is not, otherwise the bytes decide.
func RoutingIDsEqual(a, b *RoutingID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// routingIDJSON is the JSON form of an opaque id.
type routingIDJSON struct {
	Hex string `json:"hex"`
}

// MarshalJSON writes a text id as a JSON string and an opaque id as
// {"hex": "..."} so that no byte is lost.
func (r RoutingID) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(r)) {
		return json.Marshal(string(r))
	}
	return json.Marshal(routingIDJSON{Hex: r.Hex()})
}

// UnmarshalJSON reads either form written by MarshalJSON. JSON null leaves
// the id unchanged (the encoding/json convention); the object form needs a
// valid, non-empty hex (RoutingIDFromHex).
func (r *RoutingID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = RoutingID(s)
		return nil
	}
	var o routingIDJSON
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("routing id: %w", err)
	}
	id, err := RoutingIDFromHex(o.Hex)
	if err != nil {
		return fmt.Errorf("routing id: %w", err)
	}
	*r = id
	return nil
}

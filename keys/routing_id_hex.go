package keys

import (
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// CodeRoutingIDHex (shape) is the code of the error NormalizeRoutingIDHex and
// DecodeStoredRoutingID return for an unacceptable hex string.
const CodeRoutingIDHex = "routing_id.hex"

// NormalizeRoutingIDHex validates a routing id's storage hex and returns it in
// lower case. It is acceptable when it is not empty, has an even length and
// holds only 0–9, a–f and A–F; anything else is a shape error.
func NormalizeRoutingIDHex(h string) (string, error) {
	if h == "" || len(h)%2 != 0 {
		return "", codecError(ProblemShape, CodeRoutingIDHex, "routing id hex must hold a non-empty, even number of hex digits, got "+strconv.Itoa(len(h))+" bytes")
	}
	b := []byte(h)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", codecError(ProblemShape, CodeRoutingIDHex, "routing id hex holds a non-hex byte 0x"+hexByte(c)+" at offset "+strconv.Itoa(i))
		}
	}
	return string(b), nil
}

// IsTextRoutingID reports whether a routing id's bytes read as text: valid
// UTF-8 holding no C0 control (U+0000–U+001F), DEL or C1 control
// (U+007F–U+009F). Other ids are opaque transport ids.
func IsTextRoutingID(raw string) bool {
	if !utf8.ValidString(raw) {
		return false
	}
	for _, r := range raw {
		if r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// StoredRoutingID is a routing id decoded from its stored (text, optional
// hex) form.
type StoredRoutingID struct {
	// Raw holds the id's bytes, which are its identity.
	Raw string
	// Text is how the id is displayed: the decoded text of a text id, the
	// stored text of an opaque id.
	Text string
	// Opaque is set when the id came from hex whose bytes do not read as text
	// (IsTextRoutingID).
	Opaque bool
}

// DecodeStoredRoutingID decodes a routing id stored as a display text and an
// optional storage hex. Without hex (hasHex false) the id is the text itself,
// a text id whatever it holds (as in the reference).
// With hex, the hex is validated (NormalizeRoutingIDHex) and decoded; when the
// bytes read as text (IsTextRoutingID) the id is a text id holding them,
// otherwise it is an opaque id with those bytes, displayed as the given text.
// The stored text never decides the identity when hex is present.
func DecodeStoredRoutingID(text string, storedHex string, hasHex bool) (StoredRoutingID, error) {
	if !hasHex {
		return StoredRoutingID{Raw: text, Text: text}, nil
	}
	h, err := NormalizeRoutingIDHex(storedHex)
	if err != nil {
		return StoredRoutingID{}, err
	}
	b, err := hex.DecodeString(h)
	if err != nil { // unreachable after validation; kept so no error is lost
		return StoredRoutingID{}, codecError(ProblemShape, CodeRoutingIDHex, "routing id hex: "+err.Error())
	}
	raw := string(b)
	if IsTextRoutingID(raw) {
		return StoredRoutingID{Raw: raw, Text: raw}, nil
	}
	return StoredRoutingID{Raw: raw, Text: text, Opaque: true}, nil
}

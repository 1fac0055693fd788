package location

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// Text rules shared by the validators (01-model §1.2, 04-authority §0.3).
//
// Every rule also requires valid UTF-8: the reference's strings cannot hold
// invalid UTF-8, so the rules agree on every input the reference can receive,
// and a byte length means the same thing in Go as in the reference.

// Size limits used by validation.
const (
	// MaxDescriptorTextBytes bounds a DText value (descriptor identity
	// fields, entry spot ids, capability stable types).
	MaxDescriptorTextBytes = 255
	// MaxSpotIDBytes bounds a spot id (SpotIdBytes).
	MaxSpotIDBytes = 255
	// MaxPayloadBytes bounds every authority payload, creating and ready
	// payload, creation request size and terminal envelope (1 MiB).
	MaxPayloadBytes = 1 << 20
)

// CodeTextUTF8 is the Go-only code of a text field that is not valid UTF-8
// and is covered by no other rule (Type).
const CodeTextUTF8 = "text.utf8"

// IsDText reports whether s satisfies the DText rule: valid UTF-8 of 1..255
// bytes without U+0000.
func IsDText(s string) bool { return dtextProblem(s) == "" }

// IsTrimText reports whether s satisfies the TrimText rule: valid UTF-8 that
// keeps at least one character after JavaScript's trim (keys.TrimJSSpace)
// removes white space from both ends. NUL is allowed and there is no length
// bound.
func IsTrimText(s string) bool { return trimTextProblem(s) == "" }

// IsSpotIDBytes reports whether s satisfies the SpotIdBytes rule: valid UTF-8
// of 1..255 bytes (NUL allowed).
func IsSpotIDBytes(s string) bool { return spotIDProblem(s) == "" }

// IsUUIDLower reports whether s is canonical lower-case UUID text: groups of
// 8-4-4-4-12 digits of [0-9a-f] joined by '-'. Version and variant are not
// checked.
func IsUUIDLower(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// IsPlainText reports whether s satisfies the authority side's text rule:
// non-empty valid UTF-8 without U+0000, of any length.
func IsPlainText(s string) bool { return plainTextProblem(s) == "" }

// dtextProblem says why s is not DText, or "" when it is.
func dtextProblem(s string) string { return textProblem(s, MaxDescriptorTextBytes, false) }

// spotIDProblem says why s is not a valid spot id (which may hold NUL), or
// "" when it is.
func spotIDProblem(s string) string { return textProblem(s, MaxSpotIDBytes, true) }

// plainTextProblem says why s is not plain text, or "" when it is.
func plainTextProblem(s string) string { return textProblem(s, 0, false) }

// textProblem says why s is not non-empty valid UTF-8 of at most maxBytes
// bytes (0: any length) without NUL (unless nulOK), or "" when it is.
func textProblem(s string, maxBytes int, nulOK bool) string {
	switch {
	case s == "":
		return "is empty"
	case maxBytes > 0 && len(s) > maxBytes:
		return fmt.Sprintf("is %d bytes long (at most %d)", len(s), maxBytes)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case !nulOK && strings.IndexByte(s, 0) >= 0:
		return "contains NUL (U+0000)"
	default:
		return ""
	}
}

// trimTextProblem says why s is not TrimText, or "" when it is.
func trimTextProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case s == "":
		return "is empty"
	case keys.TrimJSSpace(s) == "":
		return "holds only whitespace"
	default:
		return ""
	}
}

// maxQuotedBytes bounds how much of an offending value a message repeats.
const maxQuotedBytes = 64

// quote renders a value for an error message: quoted (with escapes) when it
// is short, otherwise its first bytes and its size.
func quote(s string) string {
	if len(s) <= maxQuotedBytes {
		return fmt.Sprintf("%q", s)
	}
	cut := maxQuotedBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// textField names one text value for the UTF-8 sweep.
type textField struct {
	name  string
	value string
}

// requireUTF8 returns a CodeTextUTF8 error for the first field that is not
// valid UTF-8, in the order given.
func requireUTF8(fields ...textField) error {
	for _, f := range fields {
		if !utf8.ValidString(f.value) {
			return NewTypeError(CodeTextUTF8, "%s %s is not valid UTF-8", f.name, quote(f.value))
		}
	}
	return nil
}

// allUTF8 reports whether every value is valid UTF-8.
func allUTF8(values ...string) bool {
	for _, v := range values {
		if !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// stringsUTF8 lists the elements of a string slice as text fields named
// name[i]; none when all are valid UTF-8 (nothing to report, nothing to
// name).
func stringsUTF8(name string, values []string) []textField {
	if allUTF8(values...) {
		return nil
	}
	out := make([]textField, 0, len(values))
	for i, v := range values {
		out = append(out, textField{name: fmt.Sprintf("%s[%d]", name, i), value: v})
	}
	return out
}

// mapKeysUTF8 lists the keys of a map as text fields, in byte order so that
// the first violation reported does not depend on map iteration order; none
// when all are valid UTF-8.
func mapKeysUTF8[V any](name string, m map[string]V) []textField {
	valid := true
	for k := range m {
		valid = valid && utf8.ValidString(k)
	}
	if valid {
		return nil
	}
	keys := slices.Sorted(maps.Keys(m))
	out := make([]textField, 0, len(keys))
	for _, k := range keys {
		out = append(out, textField{name: name + " key", value: k})
	}
	return out
}

// mapStringsUTF8 lists the keys and values of a string map as text fields,
// in byte order of the keys; none when all are valid UTF-8.
func mapStringsUTF8(name string, m map[string]string) []textField {
	valid := true
	for k, v := range m {
		valid = valid && utf8.ValidString(k) && utf8.ValidString(v)
	}
	if valid {
		return nil
	}
	keys := slices.Sorted(maps.Keys(m))
	out := make([]textField, 0, 2*len(keys))
	for _, k := range keys {
		out = append(out, textField{name: name + " key", value: k})
		if utf8.ValidString(k) {
			out = append(out, textField{name: fmt.Sprintf("%s[%q]", name, k), value: m[k]})
		} else {
			out = append(out, textField{name: name + " value", value: m[k]})
		}
	}
	return out
}

// requireMaxBytes returns a Range error with code when b is longer than
// limit bytes.
func requireMaxBytes(code, field string, b []byte, limit int) error {
	if len(b) > limit {
		return NewRangeError(code, "%s is %d bytes long (at most %d)", field, len(b), limit)
	}
	return nil
}

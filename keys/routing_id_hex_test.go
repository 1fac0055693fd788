package keys

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNormalizeRoutingIDHex checks hex validation and lower-casing
// (07-codecs §3.4, checklist item 5).
func TestNormalizeRoutingIDHex(t *testing.T) {
	accepted := []struct {
		in, want string
	}{
		{"6e6f64652d61", "6e6f64652d61"},
		{"00ff", "00ff"},
		{"00FF", "00ff"},
		{"AbCdEf", "abcdef"},
		{"0123456789abcdefABCDEF", "0123456789abcdefabcdef"},
	}
	for _, tc := range accepted {
		t.Run("accepts/"+tc.in, func(t *testing.T) {
			got, err := NormalizeRoutingIDHex(tc.in)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	rejected := []struct {
		name, in string
	}{
		{"empty", ""},
		{"odd length", "abc"},
		{"one digit", "a"},
		{"non-hex letter", "0g"},
		{"space", "0 "},
		{"prefix", "0x00"},
		{"non-ASCII", "é0"},
		{"sign", "+0"},
	}
	for _, tc := range rejected {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			got, err := NormalizeRoutingIDHex(tc.in)
			require.Empty(t, got)
			requireCodecError(t, err, ProblemShape, CodeRoutingIDHex)
		})
	}
}

// TestIsTextRoutingID checks which byte strings read as text.
func TestIsTextRoutingID(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want bool
	}{
		{"ASCII", "node-a", true},
		{"Hangul", "노드", true},
		{"empty", "", true},
		{"space and tilde", " ~", true},
		{"U+00A0 after the C1 range", "\u00a0", true},
		{"NUL", "\x00", false},
		{"unit separator U+001F", "a\x1f", false},
		{"DEL", "\x7f", false},
		{"C1 U+0080", "\u0080", false},
		{"C1 U+009F", "\u009f", false},
		{"invalid UTF-8", "\xff", false},
		{"truncated sequence", "a\xc3", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, IsTextRoutingID(tc.raw))
		})
	}
}

// TestDecodeStoredRoutingID checks the stored (text, optional hex) decode
// rule of 07-codecs §3.4.
func TestDecodeStoredRoutingID(t *testing.T) {
	accepted := []struct {
		name   string
		text   string
		hex    string
		hasHex bool
		want   StoredRoutingID
	}{
		{"no hex: the text", "node-a", "", false, StoredRoutingID{Raw: "node-a", Text: "node-a"}},
		{"no hex: text with a control stays text", "a\x00", "", false, StoredRoutingID{Raw: "a\x00", Text: "a\x00"}},
		{"hex of text", "shown", "6e6f64652d61", true, StoredRoutingID{Raw: "node-a", Text: "node-a"}},
		{"upper-case hex of text", "", "6E6F", true, StoredRoutingID{Raw: "no", Text: "no"}},
		{"hex of Hangul", "x", "eb85b8eb939c", true, StoredRoutingID{Raw: "노드", Text: "노드"}},
		{"hex of bytes that are not UTF-8", "shown", "00ff", true, StoredRoutingID{Raw: "\x00\xff", Text: "shown", Opaque: true}},
		{"hex of a C0 control", "t", "6100", true, StoredRoutingID{Raw: "a\x00", Text: "t", Opaque: true}},
		{"hex of DEL", "t", "7f", true, StoredRoutingID{Raw: "\x7f", Text: "t", Opaque: true}},
		{"hex of a C1 control", "t", "c280", true, StoredRoutingID{Raw: "\u0080", Text: "t", Opaque: true}},
		{"hex of a surrogate", "t", "eda080", true, StoredRoutingID{Raw: "\xed\xa0\x80", Text: "t", Opaque: true}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeStoredRoutingID(tc.text, tc.hex, tc.hasHex)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	rejected := []struct{ name, text, hex string }{
		{"empty hex", "t", ""},
		{"odd hex", "t", "abc"},
		{"non-hex", "t", "zz"},
	}
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeStoredRoutingID(tc.text, tc.hex, true)
			requireCodecError(t, err, ProblemShape, CodeRoutingIDHex)
			require.Equal(t, StoredRoutingID{}, got)
		})
	}
}

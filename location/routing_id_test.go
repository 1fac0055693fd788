package location_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// routingIDOf returns a pointer to an id, for the optional-id equality.
func routingIDOf(s string) *location.RoutingID {
	r := location.RoutingID(s)
	return &r
}

// TestRoutingIDHex checks the storage hex of text and opaque ids
// (07-codecs §3.2, checklist item 4).
func TestRoutingIDHex(t *testing.T) {
	tests := []struct {
		name string
		id   location.RoutingID
		want string
	}{
		{"text", "node-a", "6e6f64652d61"},
		{"Hangul text", "노드", "eb85b8eb939c"},
		{"empty text", "", ""},
		{"opaque bytes", "\x00\xff", "00ff"},
		{"upper bytes are written in lower-case hex", "\xab\xcd\xef", "abcdef"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.id.Hex())
		})
	}

	t.Run("hex order equals byte order", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 5))
		for range 2000 {
			a := make([]byte, rng.IntN(4))
			b := make([]byte, rng.IntN(4))
			for i := range a {
				a[i] = byte(rng.IntN(256))
			}
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			ha, hb := location.RoutingID(a).Hex(), location.RoutingID(b).Hex()
			require.Equal(t, bytes.Compare(a, b), strings.Compare(ha, hb), "%x vs %x", a, b)
		}
	})
}

// TestRoutingIDIsTextAndString checks which ids read as text and how ids are
// displayed.
func TestRoutingIDIsTextAndString(t *testing.T) {
	tests := []struct {
		name   string
		id     location.RoutingID
		isText bool
		str    string
	}{
		{"ASCII", "node-a", true, "node-a"},
		{"Hangul", "노드", true, "노드"},
		{"empty", "", true, ""},
		{"NUL", "a\x00", false, "hex:6100"},
		{"unit separator", "\x1f", false, "hex:1f"},
		{"DEL", "\x7f", false, "hex:7f"},
		{"C1 control", "\u0085", false, "hex:c285"},
		{"first character after C1", "\u00a0", true, "\u00a0"},
		{"invalid UTF-8", "\x00\xff", false, "hex:00ff"},
		{"surrogate bytes", "\xed\xa0\x80", false, "hex:eda080"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.isText, tc.id.IsText())
			require.Equal(t, tc.str, tc.id.String())
		})
	}
}

// TestRoutingIDFromHex checks decoding a storage hex (07-codecs §3.4,
// checklist item 5).
func TestRoutingIDFromHex(t *testing.T) {
	accepted := []struct {
		hex  string
		want location.RoutingID
	}{
		{"6e6f64652d61", "node-a"},
		{"6E6F64652D61", "node-a"},
		{"eb85b8eb939c", "노드"},
		{"00ff", "\x00\xff"},
		{"00FF", "\x00\xff"},
	}
	for _, tc := range accepted {
		t.Run("accepts/"+tc.hex, func(t *testing.T) {
			got, err := location.RoutingIDFromHex(tc.hex)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, strings.ToLower(tc.hex), got.Hex())
		})
	}
	for _, h := range []string{"", "a", "abc", "zz", "0x00", " 00", "é0"} {
		t.Run("rejects/"+h, func(t *testing.T) {
			got, err := location.RoutingIDFromHex(h)
			require.Empty(t, got)
			require.ErrorIs(t, err, location.ErrInvalidArgument)
			ie, ok := location.AsInputError(err)
			require.True(t, ok)
			require.Equal(t, location.ClassType, ie.Class)
			require.Equal(t, "routing_id.hex", ie.Code)
		})
	}
}

// TestRoutingIDsEqual is the equality matrix of 07-codecs §3.3.
func TestRoutingIDsEqual(t *testing.T) {
	fromHex := func(h string) *location.RoutingID {
		r, err := location.RoutingIDFromHex(h)
		require.NoError(t, err)
		return &r
	}
	tests := []struct {
		name string
		a, b *location.RoutingID
		want bool
	}{
		{"absent and absent", nil, nil, true},
		{"absent and present", nil, routingIDOf("a"), false},
		{"present and absent", routingIDOf("a"), nil, false},
		{"absent and empty", nil, routingIDOf(""), false},
		{"empty and empty", routingIDOf(""), routingIDOf(""), true},
		{"same text", routingIDOf("node-a"), routingIDOf("node-a"), true},
		{"text and opaque with the same bytes", routingIDOf("no"), fromHex("6e6f"), true},
		{"opaque and opaque with the same bytes", fromHex("00ff"), fromHex("00FF"), true},
		{"different text", routingIDOf("node-a"), routingIDOf("node-b"), false},
		{"text differing in case", routingIDOf("A"), routingIDOf("a"), false},
		{"different opaque", fromHex("00ff"), fromHex("00fe"), false},
		{"text and different opaque", routingIDOf("no"), fromHex("6e6f00"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, location.RoutingIDsEqual(tc.a, tc.b))
			require.Equal(t, tc.want, location.RoutingIDsEqual(tc.b, tc.a), "symmetric")
		})
	}
}

// TestRoutingIDJSON checks that text ids are JSON strings, ids that are not
// UTF-8 are {"hex": ...} objects, and that no id loses a byte on the way.
func TestRoutingIDJSON(t *testing.T) {
	tests := []struct {
		name string
		id   location.RoutingID
		want string
	}{
		{"text", "node-a", `"node-a"`},
		{"Hangul text", "노드", `"노드"`},
		{"empty", "", `""`},
		{"text holding a control character", "a\x00", `"a\u0000"`},
		{"HTML characters", "<&>", `"\u003c\u0026\u003e"`},
		{"opaque bytes", "\x00\xff", `{"hex":"00ff"}`},
		{"truncated sequence", "a\xc3", `{"hex":"61c3"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.id)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
			var back location.RoutingID
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, tc.id, back)
		})
	}

	t.Run("inside a struct, optional and not", func(t *testing.T) {
		type row struct {
			ID  location.RoutingID  `json:"id"`
			Opt *location.RoutingID `json:"opt"`
		}
		for _, in := range []row{
			{ID: "node-a", Opt: routingIDOf("\x00\xff")},
			{ID: "\xfe", Opt: nil},
			{ID: "", Opt: routingIDOf("")},
		} {
			b, err := json.Marshal(in)
			require.NoError(t, err)
			var out row
			require.NoError(t, json.Unmarshal(b, &out))
			require.Equal(t, in, out, "JSON %s", b)
		}
	})

	t.Run("random bytes round-trip", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 1))
		for range 2000 {
			raw := make([]byte, rng.IntN(6))
			for i := range raw {
				raw[i] = byte(rng.IntN(256))
			}
			b, err := json.Marshal(location.RoutingID(raw))
			require.NoError(t, err)
			var back location.RoutingID
			require.NoError(t, json.Unmarshal(b, &back))
			require.Equal(t, location.RoutingID(raw), back, "JSON %s", b)
		}
	})

	t.Run("upper-case hex is read", func(t *testing.T) {
		var id location.RoutingID
		require.NoError(t, json.Unmarshal([]byte(`{"hex":"00FF"}`), &id))
		require.Equal(t, location.RoutingID("\x00\xff"), id)
	})

	t.Run("null leaves the id unchanged", func(t *testing.T) {
		id := location.RoutingID("keep")
		require.NoError(t, json.Unmarshal([]byte(`null`), &id))
		require.Equal(t, location.RoutingID("keep"), id)
	})

	for _, bad := range []string{`123`, `true`, `[]`, `{"hex":"zz"}`, `{"hex":"abc"}`, `{"hex":""}`, `{}`, `{"hex":5}`} {
		t.Run("rejects "+bad, func(t *testing.T) {
			id := location.RoutingID("keep")
			require.Error(t, json.Unmarshal([]byte(bad), &id))
			require.Equal(t, location.RoutingID("keep"), id)
		})
	}
}

package keys

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSegments checks the worked examples of 07-codecs §2.3 byte for byte,
// and that each one decodes back to its parts.
func TestSegments(t *testing.T) {
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"peer with rid", []string{"route-mesh", "play", "router", hex.EncodeToString([]byte("node-a"))}, "10:route-mesh4:play6:router12:6e6f64652d61"},
		{"peer with endpoint", []string{"fanout", "chat.room", "pub", "tcp://10.0.0.1:5555"}, "6:fanout9:chat.room3:pub19:tcp://10.0.0.1:5555"},
		{"peer with empty mesh and identity", []string{"route-mesh", "", "router", ""}, "10:route-mesh0:6:router0:"},
		{"spot with two-byte character", []string{"zoné", "spot-1"}, "5:zoné6:spot-1"},
		{"spot with four-byte character", []string{"play", "🚀"}, "4:play4:🚀"},
		{"route", []string{"1", "session:42"}, "1:110:session:42"},
		{"actor with colon in mesh", []string{"3:a", "b"}, "3:3:a1:b"},
		{"actor with colon in id", []string{"3", ":ab"}, "1:33::ab"},
		{"no parts", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Segments(tc.parts...)
			require.Equal(t, tc.want, got)
			parts, err := DecodeSegments(got)
			require.NoError(t, err)
			want := tc.parts
			if want == nil {
				want = []string{}
			}
			require.Equal(t, want, parts)
		})
	}
	t.Run("bytes of the two-byte example", func(t *testing.T) {
		require.Equal(t, []byte{0x35, 0x3a, 0x7a, 0x6f, 0x6e, 0xc3, 0xa9, 0x36, 0x3a}, []byte(Segments("zoné", "spot-1"))[:9])
	})
}

// TestDecodeSegments checks round trips of awkward parts and every rejection
// of 07-codecs §2.1.
func TestDecodeSegments(t *testing.T) {
	roundTrips := []struct {
		name  string
		parts []string
	}{
		{"one empty part", []string{""}},
		{"several empty parts", []string{"", "", ""}},
		{"multibyte", []string{"노드", "é", "🚀🚀"}},
		{"embedded colons and digits", []string{"12:34", ":", "0:", "9"}},
		{"part that looks like a key", []string{Segments("a", "b"), "c"}},
		{"ten-byte part", []string{"0123456789"}},
		{"NUL and controls", []string{"\x00", "\r\n\t"}},
		{"invalid UTF-8 bytes", []string{"\xff\xfe", "\xc3"}},
		{"long part", []string{strings.Repeat("x", 1000)}},
	}
	for _, tc := range roundTrips {
		t.Run("round trip/"+tc.name, func(t *testing.T) {
			got, err := DecodeSegments(Segments(tc.parts...))
			require.NoError(t, err)
			require.Equal(t, tc.parts, got)
		})
	}

	rejections := []struct {
		name string
		in   string
		code string
	}{
		{"missing colon", "3", CodeSegmentsColon},
		{"missing colon after a good part", "1:a12", CodeSegmentsColon},
		{"empty length", ":abc", CodeSegmentsLength},
		{"non-digit length", "a:b", CodeSegmentsLength},
		{"sign", "+1:a", CodeSegmentsLength},
		{"digit then letter", "1a:b", CodeSegmentsLength},
		{"leading zero", "01:a", CodeSegmentsLeadingZero},
		{"double zero", "00:", CodeSegmentsLeadingZero},
		{"length beyond the input", "4:abc", CodeSegmentsOverrun},
		{"length beyond a multibyte input (characters, not bytes)", "3:é", CodeSegmentsOverrun},
		{"huge length", "99999999999999999999999999:a", CodeSegmentsOverrun},
		{"second part overruns", "1:a2:b", CodeSegmentsOverrun},
	}
	for _, tc := range rejections {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			got, err := DecodeSegments(tc.in)
			require.Nil(t, got)
			requireCodecError(t, err, ProblemShape, tc.code)
		})
	}

	t.Run("multibyte length counts bytes", func(t *testing.T) {
		got, err := DecodeSegments("2:é")
		require.NoError(t, err)
		require.Equal(t, []string{"é"}, got)
	})
}

// FuzzDecodeSegments checks both round trips: encoded parts decode to
// themselves, and any decodable input re-encodes to itself (the encoding is
// canonical), without panics.
func FuzzDecodeSegments(f *testing.F) {
	for _, s := range []string{"", "0:", "1:a", "10:route-mesh4:play", "5:zoné6:spot-1", "3:3:a1:b", "01:a", "4:abc", "a:b", ":", "1:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := DecodeSegments(s)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			require.Nil(t, parts)
		} else {
			require.Equal(t, s, Segments(parts...))
		}
		// Treat the input as parts too: split it at every '|'.
		in := strings.Split(s, "|")
		back, err := DecodeSegments(Segments(in...))
		require.NoError(t, err)
		require.Equal(t, in, back)
	})
}

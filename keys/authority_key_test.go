package keys

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// authorityVector is a canonical authority key and the kind and identity
// it encodes.
type authorityVector struct {
	name string
	kind AuthorityKind
	id   string
	key  string
}

// requireAuthorityRoundTrips checks that each vector's kind and identity
// encode to its key and that the key decodes back to them.
func requireAuthorityRoundTrips(t *testing.T, vectors []authorityVector) {
	t.Helper()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			got, err := EncodeAuthorityKey(v.kind, v.id)
			require.NoError(t, err)
			require.Equal(t, v.key, got)
			kind, id, err := DecodeAuthorityKey(v.key)
			require.NoError(t, err)
			require.Equal(t, v.kind, kind)
			require.Equal(t, v.id, id)
		})
	}
}

// mustHex decodes a hex test vector.
func mustHex(t *testing.T, h string) string {
	t.Helper()
	b, err := hex.DecodeString(h)
	require.NoError(t, err)
	return string(b)
}

// TestEncodeAuthorityKey checks the examples of 07-codecs §4 and the golden
// vectors of 04-authority §1.2.1, and that each decodes back.
func TestEncodeAuthorityKey(t *testing.T) {
	requireAuthorityRoundTrips(t, []authorityVector{
		{"07 §4 actor", AuthorityActor, "player-42", "zla1:a:9:player-42"},
		{"07 §4 user spot", AuthoritySpot, "room 1/α", "zla1:s:9:room%201%2F%CE%B1"},
		{"07 §4 instance spot", AuthoritySpot, "Zone~A.b_c", "zla1:s:10:Zone~A.b_c"},
		{"07 §4 actor é", AuthorityActor, "é", "zla1:a:2:%C3%A9"},
		{"07 §4 actor percent", AuthorityActor, "%41", "zla1:a:3:%2541"},
		{"golden user:42", AuthorityActor, "user:42", "zla1:a:7:user%3A42"},
		{"golden User:42", AuthorityActor, "User:42", "zla1:a:7:User%3A42"},
		{"golden decomposed é", AuthorityActor, mustHex(t, "65cc81"), "zla1:a:3:e%CC%81"},
		{"golden spot room:é", AuthoritySpot, mustHex(t, "726f6f6d3ac3a9"), "zla1:s:7:room%3A%C3%A9"},
		{"golden spot user:42", AuthoritySpot, mustHex(t, "757365723a3432"), "zla1:s:7:user%3A42"},
		{"unreserved and reserved", AuthorityActor, "a-b.c_d~e/f", "zla1:a:11:a-b.c_d~e%2Ff"},
		{"NUL", AuthorityActor, "\x00", "zla1:a:1:%00"},
		{"four-byte character", AuthoritySpot, "🚀", "zla1:s:4:%F0%9F%9A%80"},
		{"two-digit length", AuthorityActor, strings.Repeat("x", 99), "zla1:a:99:" + strings.Repeat("x", 99)},
	})

	t.Run("255 x gives 266 characters", func(t *testing.T) {
		got, err := EncodeAuthorityKey(AuthorityActor, strings.Repeat("x", 255))
		require.NoError(t, err)
		require.Equal(t, "zla1:a:255:"+strings.Repeat("x", 255), got)
		require.Equal(t, 266, utf8.RuneCountInString(got))
	})
	t.Run("255 NUL bytes give the longest key", func(t *testing.T) {
		got, err := EncodeAuthorityKey(AuthorityActor, strings.Repeat("\x00", 255))
		require.NoError(t, err)
		require.Equal(t, "zla1:a:255:"+strings.Repeat("%00", 255), got)
		require.Len(t, got, MaxAuthorityKeyBytes)
		require.Equal(t, 776, MaxAuthorityKeyBytes)
	})
	t.Run("255-byte multibyte id", func(t *testing.T) {
		id := strings.Repeat("é", 127) + "x" // 255 bytes, 128 characters
		got, err := EncodeAuthorityKey(AuthoritySpot, id)
		require.NoError(t, err)
		require.Equal(t, "zla1:s:255:"+strings.Repeat("%C3%A9", 127)+"x", got)
	})
	t.Run("no case folding or normalisation", func(t *testing.T) {
		a, err := EncodeAuthorityKey(AuthorityActor, "user:42")
		require.NoError(t, err)
		b, err := EncodeAuthorityKey(AuthorityActor, "User:42")
		require.NoError(t, err)
		require.NotEqual(t, a, b)
		c, err := EncodeAuthorityKey(AuthorityActor, "é")
		require.NoError(t, err)
		d, err := EncodeAuthorityKey(AuthorityActor, "e\u0301")
		require.NoError(t, err)
		require.NotEqual(t, c, d)
	})

	rejections := []struct {
		name    string
		kind    AuthorityKind
		id      string
		problem Problem
		code    string
	}{
		{"empty id", AuthorityActor, "", ProblemLength, CodeAuthorityIdentityLength},
		{"256 bytes", AuthorityActor, strings.Repeat("x", 256), ProblemLength, CodeAuthorityIdentityLength},
		{"128 é (256 bytes)", AuthoritySpot, strings.Repeat("é", 128), ProblemLength, CodeAuthorityIdentityLength},
		{"invalid UTF-8", AuthorityActor, "\xff\x61", ProblemShape, CodeAuthorityIdentityText},
		{"surrogate code point", AuthorityActor, "\xed\xa0\x80", ProblemShape, CodeAuthorityIdentityText},
		{"truncated sequence", AuthorityActor, "a\xc3", ProblemShape, CodeAuthorityIdentityText},
		{"unknown kind", AuthorityKind('x'), "a", ProblemShape, CodeAuthorityKind},
		{"zero kind", AuthorityKind(0), "a", ProblemShape, CodeAuthorityKind},
	}
	for _, tc := range rejections {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			got, err := EncodeAuthorityKey(tc.kind, tc.id)
			require.Empty(t, got)
			requireCodecError(t, err, tc.problem, tc.code)
		})
	}
}

// TestDecodeAuthorityKey checks the strict decoder: one vector per rule of
// 07-codecs §4 (plus the vectors of 04-authority §1.2.2), the 776/777-byte
// boundary, and the byte-order-mark divergence from the reference.
func TestDecodeAuthorityKey(t *testing.T) {
	longest := "zla1:a:255:" + strings.Repeat("%00", 255)
	require.Len(t, longest, 776)

	requireAuthorityRoundTrips(t, []authorityVector{
		{"776-byte maximum", AuthorityActor, strings.Repeat("\x00", 255), longest},
		{"three-digit length", AuthoritySpot, strings.Repeat("a", 100), "zla1:s:100:" + strings.Repeat("a", 100)},
		{"every unreserved class", AuthorityActor, "Az09-._~", "zla1:a:8:Az09-._~"},
		{"escaped colon and percent", AuthoritySpot, ":%", "zla1:s:2:%3A%25"},
	})

	rejections := []struct {
		name string
		key  string
		code string
	}{
		// Rule 1: longer than 776 bytes.
		{"rule 1: 777 bytes", "zla1:a:1:" + strings.Repeat("A", 768), CodeAuthorityTooLong},
		{"rule 1: 777 bytes of a valid-looking key", longest + "A", CodeAuthorityTooLong},
		{"rule 1: 256 escaped bytes (04 §1.2.2 vector)", "zla1:a:256:" + strings.Repeat("%00", 256), CodeAuthorityTooLong},
		// Rule 2: shape.
		{"rule 2: leading zero", "zla1:a:01:A", CodeAuthorityShape},
		{"rule 2: zero length", "zla1:a:0:", CodeAuthorityShape},
		{"rule 2: four digits", "zla1:a:1000:x", CodeAuthorityShape},
		{"rule 2: unknown kind", "zla1:x:1:a", CodeAuthorityShape},
		{"rule 2: upper-case kind", "zla1:A:1:a", CodeAuthorityShape},
		{"rule 2: wrong prefix", "zlb1:a:1:a", CodeAuthorityShape},
		{"rule 2: empty", "", CodeAuthorityShape},
		{"rule 2: prefix only", "zla1:", CodeAuthorityShape},
		{"rule 2: no length", "zla1:a::a", CodeAuthorityShape},
		{"rule 2: no colon after the length", "zla1:a:1", CodeAuthorityShape},
		{"rule 2: sign", "zla1:a:+1:a", CodeAuthorityShape},
		{"rule 2: line feed in the identity", "zla1:a:1:\n", CodeAuthorityShape},
		{"rule 2: line separator in the identity", "zla1:a:3:\u2028", CodeAuthorityShape},
		// Rule 3: declared length above 255.
		{"rule 3: 256", "zla1:a:256:" + strings.Repeat("x", 256), CodeAuthorityDeclaredLength},
		{"rule 3: 999", "zla1:a:999:x", CodeAuthorityDeclaredLength},
		// Rule 4: bad escape.
		{"rule 4: lower-case hex", "zla1:a:1:%c3", CodeAuthorityEscape},
		{"rule 4: lower-case slash", "zla1:a:1:%2f", CodeAuthorityEscape},
		{"rule 4: one digit", "zla1:a:1:%4", CodeAuthorityEscape},
		{"rule 4: percent alone", "zla1:a:1:%", CodeAuthorityEscape},
		{"rule 4: non-hex", "zla1:a:1:%G0", CodeAuthorityEscape},
		// Rule 5: escape of an unreserved byte.
		{"rule 5: %41", "zla1:a:1:%41", CodeAuthorityEscapeUnreserved},
		{"rule 5: %7E", "zla1:a:1:%7E", CodeAuthorityEscapeUnreserved},
		// Rule 6: literal that must be escaped.
		{"rule 6: colon", "zla1:a:1::", CodeAuthorityLiteral},
		{"rule 6: slash", "zla1:a:1:/", CodeAuthorityLiteral},
		{"rule 6: space", "zla1:a:1: ", CodeAuthorityLiteral},
		{"rule 6: non-ASCII", "zla1:a:2:é", CodeAuthorityLiteral},
		{"rule 6: invalid byte", "zla1:a:1:\xff", CodeAuthorityLiteral},
		// Rule 7: decoded length differs from the declared one.
		{"rule 7: too few bytes", "zla1:a:2:a", CodeAuthorityLengthMismatch},
		{"rule 7: too many bytes", "zla1:a:1:ab", CodeAuthorityLengthMismatch},
		{"rule 7: nothing", "zla1:a:1:", CodeAuthorityLengthMismatch},
		// Rule 8: invalid UTF-8.
		{"rule 8: lone byte", "zla1:a:1:%FF", CodeAuthorityUTF8},
		{"rule 8: truncated sequence", "zla1:a:1:%C3", CodeAuthorityUTF8},
		{"rule 8: overlong NUL", "zla1:a:2:%C0%80", CodeAuthorityUTF8},
		{"rule 8: surrogate", "zla1:a:3:%ED%A0%80", CodeAuthorityUTF8},
		{"rule 8: beyond U+10FFFF", "zla1:a:4:%F4%90%80%80", CodeAuthorityUTF8},
		// The first bad position decides, as in the reference's scan.
		{"order: unreserved escape before a bad literal", "zla1:a:2:%41/", CodeAuthorityEscapeUnreserved},
		{"order: bad literal before a bad escape", "zla1:a:2:/%4", CodeAuthorityLiteral},
		{"order: too long before shape", strings.Repeat("x", 777), CodeAuthorityTooLong},
		{"order: length mismatch before UTF-8", "zla1:a:2:%FF", CodeAuthorityLengthMismatch},
	}
	for _, tc := range rejections {
		t.Run("rejects/"+tc.name, func(t *testing.T) {
			kind, id, err := DecodeAuthorityKey(tc.key)
			require.Zero(t, kind)
			require.Empty(t, id)
			requireCodecError(t, err, ProblemShape, tc.code)
		})
	}

	// The reference drops a leading byte-order mark while decoding (04 D-15):
	// for this key it returns the empty id. Go keeps the bytes, so the id is
	// U+FEFF and the key round-trips.
	t.Run("leading byte-order mark is kept (reference divergence)", func(t *testing.T) {
		kind, id, err := DecodeAuthorityKey("zla1:a:3:%EF%BB%BF")
		require.NoError(t, err)
		require.Equal(t, AuthorityActor, kind)
		require.Equal(t, "\uFEFF", id)
		again, err := EncodeAuthorityKey(kind, id)
		require.NoError(t, err)
		require.Equal(t, "zla1:a:3:%EF%BB%BF", again)

		_, id, err = DecodeAuthorityKey("zla1:a:4:%EF%BB%BFa")
		require.NoError(t, err)
		require.Equal(t, "\uFEFFa", id) // the reference gives "a"
	})
}

// TestAuthorityKind checks the discriminator's text form.
func TestAuthorityKind(t *testing.T) {
	require.Equal(t, "a", AuthorityActor.String())
	require.Equal(t, "s", AuthoritySpot.String())
}

// FuzzDecodeAuthorityKey checks that decoding never panics, that every key it
// accepts is canonical (re-encodes to itself) and that every encodable id
// round-trips through a key.
func FuzzDecodeAuthorityKey(f *testing.F) {
	// The engine minimises every new interesting input in time quadratic in
	// its length, and the branches that only long inputs reach (a key over 776
	// bytes, an id over 255) would stall it for a minute each. Seeds are not
	// minimised, so the long seeds below cover those branches up front.
	for _, s := range []string{
		"zla1:a:9:player-42", "zla1:s:9:room%201%2F%CE%B1", "zla1:a:3:%EF%BB%BF", "zla1:a:01:A",
		"zla1:a:1:%41", "zla1:a:1:%c3", "zla1:a:2:a", "zla1:a:1:%FF", "zla1:a:999:x", "zla1:a:1::",
		"player-42", "é", "\xff", "",
		strings.Repeat("x", 256), "zla1:a:1:" + strings.Repeat("A", 768),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, id, err := DecodeAuthorityKey(s)
		if err != nil {
			var ce *CodecError
			require.True(t, errors.As(err, &ce))
			require.Equal(t, ProblemShape, ce.Problem)
			require.ErrorIs(t, err, ErrMalformed)
		} else {
			again, err := EncodeAuthorityKey(kind, id)
			require.NoError(t, err)
			require.Equal(t, s, again)
		}

		for _, k := range []AuthorityKind{AuthorityActor, AuthoritySpot} {
			key, err := EncodeAuthorityKey(k, s)
			if !utf8.ValidString(s) || len(s) < 1 || len(s) > MaxAuthorityIdentityBytes {
				require.ErrorIs(t, err, ErrMalformed)
				continue
			}
			require.NoError(t, err)
			require.LessOrEqual(t, len(key), MaxAuthorityKeyBytes)
			gotKind, gotID, err := DecodeAuthorityKey(key)
			require.NoError(t, err)
			require.Equal(t, k, gotKind)
			require.Equal(t, s, gotID)
		}
	})
}

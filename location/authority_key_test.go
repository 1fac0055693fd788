package location_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
)

// requireAuthorityKeyError checks that err is an *InputError wrapping
// ErrInvalidArgument with the given class and code.
func requireAuthorityKeyError(t *testing.T, err error, class location.ErrorClass, code string) {
	t.Helper()
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	ie, ok := location.AsInputError(err)
	require.True(t, ok, "error %v is not an *InputError", err)
	require.Equal(t, class, ie.Class)
	require.Equal(t, code, ie.Code)
	require.NotEmpty(t, ie.Message)
}

// TestAuthorityKey checks the authority key codec's domain wrappers against
// the scenarios AUTH-001..AUTH-010.
func TestAuthorityKey(t *testing.T) {
	t.Run("AUTH-001 golden encoding, AUTH-002 spot kinds share a key", func(t *testing.T) {
		vectors := append(fixture.AuthorityKeyGolden(),
			fixture.AuthorityKeyVector{Kind: location.ObjectUserSpot, ID: "x", Key: "zla1:s:1:x"},
			fixture.AuthorityKeyVector{Kind: location.ObjectActor, ID: "x", Key: "zla1:a:1:x"})
		for _, g := range vectors {
			kinds := []location.ObjectKind{g.Kind}
			if g.Kind == location.ObjectUserSpot {
				kinds = append(kinds, location.ObjectInstanceSpot)
			}
			for _, kind := range kinds {
				got, err := location.EncodeAuthorityKey(kind, g.ID)
				require.NoError(t, err)
				require.Equal(t, g.Key, got, "kind %s id %q", kind, g.ID)
			}
		}
	})

	t.Run("AUTH-003 identity length bounds", func(t *testing.T) {
		got, err := location.EncodeAuthorityKey(location.ObjectActor, strings.Repeat("\x00", 255))
		require.NoError(t, err)
		require.Equal(t, location.AuthorityKey("zla1:a:255:"+strings.Repeat("%00", 255)), got)
		require.Len(t, got, 776)

		for name, id := range map[string]string{
			"256 bytes":           strings.Repeat("x", 256),
			"empty":               "",
			"128 é (256 bytes)":   strings.Repeat("é", 128),
			"256 NUL bytes":       strings.Repeat("\x00", 256),
			"spot of 256 bytes":   strings.Repeat("s", 256),
			"127 é and 2 x (256)": strings.Repeat("é", 127) + "xx",
		} {
			t.Run(name, func(t *testing.T) {
				got, err := location.EncodeAuthorityKey(location.ObjectActor, id)
				require.Empty(t, got)
				requireAuthorityKeyError(t, err, location.ClassRange, location.CodeAuthorityIdentityLength)
			})
		}
		t.Run("255-byte multibyte id", func(t *testing.T) {
			got, err := location.EncodeAuthorityKey(location.ObjectInstanceSpot, strings.Repeat("é", 127)+"x")
			require.NoError(t, err)
			require.Equal(t, location.AuthorityKey("zla1:s:255:"+strings.Repeat("%C3%A9", 127)+"x"), got)
		})
	})

	t.Run("AUTH-004 literal and escaped bytes", func(t *testing.T) {
		got, err := location.EncodeAuthorityKey(location.ObjectActor, "a-b.c_d~e/f")
		require.NoError(t, err)
		require.Equal(t, location.AuthorityKey("zla1:a:11:a-b.c_d~e%2Ff"), got)
	})

	t.Run("AUTH-005 strict decode round trip", func(t *testing.T) {
		for _, g := range fixture.AuthorityKeyGolden() {
			kind, id, err := location.DecodeAuthorityKey(g.Key)
			require.NoError(t, err)
			require.Equal(t, g.Kind, kind, "key %s", g.Key)
			require.Equal(t, g.ID, id, "key %s", g.Key)
		}
		kind, id, err := location.DecodeAuthorityKey(location.AuthorityKey("zla1:a:255:" + strings.Repeat("%00", 255)))
		require.NoError(t, err)
		require.Equal(t, location.ObjectActor, kind)
		require.Equal(t, strings.Repeat("\x00", 255), id)

		// An instance spot's key decodes as a user spot.
		key, err := location.EncodeAuthorityKey(location.ObjectInstanceSpot, "room")
		require.NoError(t, err)
		kind, id, err = location.DecodeAuthorityKey(key)
		require.NoError(t, err)
		require.Equal(t, location.ObjectUserSpot, kind)
		require.Equal(t, "room", id)
	})

	decodeRejections := func(t *testing.T, cases []struct{ key, code string }) {
		t.Helper()
		for _, tc := range cases {
			t.Run(tc.key, func(t *testing.T) {
				kind, id, err := location.DecodeAuthorityKey(location.AuthorityKey(tc.key))
				require.Empty(t, kind)
				require.Empty(t, id)
				requireAuthorityKeyError(t, err, location.ClassType, "codec."+tc.code)
			})
		}
	}

	t.Run("AUTH-006 decode rejects malformed lengths", func(t *testing.T) {
		decodeRejections(t, []struct{ key, code string }{
			{"zla1:a:01:A", keys.CodeAuthorityShape},
			{"zla1:a:0:", keys.CodeAuthorityShape},
			{"zla1:a:256:" + strings.Repeat("%00", 256), keys.CodeAuthorityTooLong}, // 779 bytes: rule 1 first
			{"zla1:a:999:x", keys.CodeAuthorityDeclaredLength},
			{"zla1:a:1:" + strings.Repeat("A", 768), keys.CodeAuthorityTooLong}, // 777 bytes
		})
	})

	t.Run("AUTH-007 decode rejects non-canonical text", func(t *testing.T) {
		decodeRejections(t, []struct{ key, code string }{
			{"zla1:a:1:%41", keys.CodeAuthorityEscapeUnreserved},
			{"zla1:a:1:%c3", keys.CodeAuthorityEscape},
			{"zla1:a:1:%4", keys.CodeAuthorityEscape},
			{"zla1:a:1::", keys.CodeAuthorityLiteral},
			{"zla1:a:1:/", keys.CodeAuthorityLiteral},
			{"zla1:a:2:é", keys.CodeAuthorityLiteral},
			{"zla1:x:1:a", keys.CodeAuthorityShape},
			{"zlb1:a:1:a", keys.CodeAuthorityShape},
		})
	})

	t.Run("AUTH-008 decode rejects bad bytes", func(t *testing.T) {
		decodeRejections(t, []struct{ key, code string }{
			{"zla1:a:1:%FF", keys.CodeAuthorityUTF8},
			{"zla1:a:2:a", keys.CodeAuthorityLengthMismatch},
		})
	})

	// The reference drops the byte-order mark and returns an empty id (04
	// D-15); Go keeps it.
	t.Run("AUTH-009 leading byte-order mark is kept", func(t *testing.T) {
		kind, id, err := location.DecodeAuthorityKey("zla1:a:3:%EF%BB%BF")
		require.NoError(t, err)
		require.Equal(t, location.ObjectActor, kind)
		require.Equal(t, "\uFEFF", id)
		again, err := location.EncodeAuthorityKey(kind, id)
		require.NoError(t, err)
		require.Equal(t, location.AuthorityKey("zla1:a:3:%EF%BB%BF"), again)
	})

	t.Run("AUTH-010 encoder rejects invalid UTF-8", func(t *testing.T) {
		got, err := location.EncodeAuthorityKey(location.ObjectActor, "\xff\x61")
		require.Empty(t, got)
		requireAuthorityKeyError(t, err, location.ClassType, location.CodeAuthorityIdentityText)

		// Invalid UTF-8 is reported before the length.
		got, err = location.EncodeAuthorityKey(location.ObjectUserSpot, strings.Repeat("\xff", 300))
		require.Empty(t, got)
		requireAuthorityKeyError(t, err, location.ClassType, location.CodeAuthorityIdentityText)
	})

	t.Run("kind without an authority namespace", func(t *testing.T) {
		for _, kind := range []location.ObjectKind{"", "entry_spot", "Actor", "spot"} {
			got, err := location.EncodeAuthorityKey(kind, "x")
			require.Empty(t, got)
			requireAuthorityKeyError(t, err, location.ClassType, location.CodeAuthorityObjectKind)
		}
	})
}

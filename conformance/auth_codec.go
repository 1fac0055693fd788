package conformance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/conformance/fixture"
	"github.com/zlink-systems/zlink-etcd/location"
)

// Section A of the authority catalogue: the zla1: authority key codec
// (04 §1.2). These scenarios exercise the codec only; the store is not used.

// authBoundaryKey is the 776-byte key of 255 NUL bytes.
func authBoundaryKey() location.AuthorityKey {
	return location.AuthorityKey("zla1:a:255:" + strings.Repeat("%00", 255))
}

// auth001 AUTH-001 Golden encoding.
func auth001(c *Case) {
	for _, g := range fixture.AuthorityKeyGolden() {
		got, err := location.EncodeAuthorityKey(g.Kind, g.ID)
		require.NoError(c, err, "encode %s %q", g.Kind, g.ID)
		require.Equal(c, g.Key, got, "encode %s %q", g.Kind, g.ID)
		if g.Kind == location.ObjectUserSpot {
			inst, err := location.EncodeAuthorityKey(location.ObjectInstanceSpot, g.ID)
			require.NoError(c, err)
			require.Equal(c, g.Key, inst, "every spot kind shares the key")
		}
	}
}

// auth002 AUTH-002 Spot kinds share a key.
func auth002(c *Case) {
	us, err := location.EncodeAuthorityKey(location.ObjectUserSpot, "x")
	require.NoError(c, err)
	is, err := location.EncodeAuthorityKey(location.ObjectInstanceSpot, "x")
	require.NoError(c, err)
	a, err := location.EncodeAuthorityKey(location.ObjectActor, "x")
	require.NoError(c, err)
	require.Equal(c, location.AuthorityKey("zla1:s:1:x"), us)
	require.Equal(c, us, is)
	require.Equal(c, location.AuthorityKey("zla1:a:1:x"), a)
}

// auth003 AUTH-003 Identity length bounds.
func auth003(c *Case) {
	k, err := location.EncodeAuthorityKey(location.ObjectActor, strings.Repeat("\x00", 255))
	require.NoError(c, err)
	require.Equal(c, authBoundaryKey(), k)
	require.Len(c, string(k), 776)
	for _, id := range []string{strings.Repeat("a", 256), "", strings.Repeat("é", 128)} {
		_, err := location.EncodeAuthorityKey(location.ObjectActor, id)
		authRequireInvalid(c, err, "encode of a "+strconv.Itoa(len(id))+"-byte identity")
	}
}

// auth004 AUTH-004 Literal and escaped bytes.
func auth004(c *Case) {
	k, err := location.EncodeAuthorityKey(location.ObjectActor, "a-b.c_d~e/f")
	require.NoError(c, err)
	require.Equal(c, location.AuthorityKey("zla1:a:11:a-b.c_d~e%2Ff"), k)
}

// auth005 AUTH-005 Strict decode round trip.
func auth005(c *Case) {
	for _, g := range fixture.AuthorityKeyGolden() {
		kind, id, err := location.DecodeAuthorityKey(g.Key)
		require.NoError(c, err, "decode %s", g.Key)
		require.Equal(c, g.ID, id, "decode %s", g.Key)
		require.Equal(c, g.Kind, kind, "decode %s", g.Key)
	}
	kind, id, err := location.DecodeAuthorityKey(authBoundaryKey())
	require.NoError(c, err)
	require.Equal(c, location.ObjectActor, kind)
	require.Equal(c, strings.Repeat("\x00", 255), id)
}

// authRequireDecodeRejects requires each key to be rejected by the decoder.
func authRequireDecodeRejects(c *Case, keys ...string) {
	c.Helper()
	for _, k := range keys {
		_, _, err := location.DecodeAuthorityKey(location.AuthorityKey(k))
		authRequireInvalid(c, err, fmt.Sprintf("decode %.40q", k))
	}
}

// auth006 AUTH-006 Decode rejects malformed lengths.
func auth006(c *Case) {
	authRequireDecodeRejects(c,
		"zla1:a:01:A",
		"zla1:a:0:",
		"zla1:a:256:"+strings.Repeat("%00", 256),
		"zla1:a:999:x",
		"zla1:a:1:"+strings.Repeat("A", 768),
	)
	require.Len(c, "zla1:a:1:"+strings.Repeat("A", 768), 777)
}

// auth007 AUTH-007 Decode rejects non-canonical text.
func auth007(c *Case) {
	authRequireDecodeRejects(c,
		"zla1:a:1:%41", "zla1:a:1:%c3", "zla1:a:1:%4", "zla1:a:1::", "zla1:a:1:/",
		"zla1:a:2:é", "zla1:x:1:a", "zlb1:a:1:a",
	)
}

// auth008 AUTH-008 Decode rejects bad bytes.
func auth008(c *Case) {
	authRequireDecodeRejects(c, "zla1:a:1:%FF", "zla1:a:2:a")
}

// auth009 AUTH-009 [quirk] Leading byte-order mark: Go keeps the BOM (D-15).
func auth009(c *Case) {
	const key location.AuthorityKey = "zla1:a:3:%EF%BB%BF"
	kind, id, err := location.DecodeAuthorityKey(key)
	require.NoError(c, err)
	require.Equal(c, location.ObjectActor, kind)
	require.Equal(c, "\uFEFF", id)
	again, err := location.EncodeAuthorityKey(kind, id)
	require.NoError(c, err)
	require.Equal(c, key, again)
}

// auth010 AUTH-010 [go] Encoder rejects invalid UTF-8.
func auth010(c *Case) {
	_, err := location.EncodeAuthorityKey(location.ObjectActor, "\xff\x61")
	authRequireInvalid(c, err, "encode of invalid UTF-8")
}

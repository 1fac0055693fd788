package keys

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNormalizeEndpoint checks the worked examples of 07-codecs §5.2 byte for
// byte (they were computed with the reference algorithm).
func TestNormalizeEndpoint(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"  TCP://Example.COM:0080/  ", "tcp://example.com:80"},
		{"tcp://EXAMPLE.com", "tcp://example.com"},
		{"tcp://[FE80::1%Eth0]:0009", "tcp://[fe80::1%Eth0]:9"},
		{"tcp://fe80::1", "tcp://[fe80::1]"},
		{"tcp://FE80::1%eth0", "tcp://[fe80::1%eth0]"},
		{"tcp://[::FFFF:1.2.3.4]", "tcp://[::ffff:1.2.3.4]"},
		{"tcp://user:PW@Host:007/Path//?Q=A/#Frag/", "tcp://user:PW@host:7/Path?Q=A/#Frag/"},
		{"tcp://a@b@C:1", "tcp://a@b@c:1"},
		{"ws://Host:80/Path/", "ws://host:80/Path"},
		{"tcp://h:1/a/b///", "tcp://h:1/a/b"},
		{"tcp://h:1?x=/", "tcp://h:1?x=/"},
		{"TcP://H:1#/", "tcp://h:1#/"},
		{"tcp://host:000", "tcp://host:0"},
		{"tcp://host:", "tcp://host"},
		{"tcp://host:abc", "tcp://host:abc"},
		{"tcp://h:+1", "tcp://h:+1"},
		{"tcp://h:1:2", "tcp://[h:1:2]"},
		{"tcp://*:5555", "tcp://*:5555"},
		{"tcp://ÄB.example:1", "tcp://äb.example:1"},
		{"tcp://[::1", "tcp://[::1"},
		{"tcp://[::1]x:5", "tcp://[::1]"},
		{"ipc:///Tmp/Sock/", "ipc:///Tmp/Sock/"},
		{"IPC://X/", "ipc://X/"},
		{"inproc://Name", "inproc://Name"},
		{"udp://HOST:01", "udp://HOST:01"},
		{"localhost:5555", "localhost:5555"},
		{"tcp://", "tcp://"},
		{"", ""},
		{"   ", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := NormalizeEndpoint(tc.in)
			require.Equal(t, tc.want, got)
			require.Equal(t, got, NormalizeEndpoint(got), "idempotent")
		})
	}
}

// TestNormalizeEndpointDetails checks rules of 07-codecs §5.1 that the worked
// examples do not reach.
func TestNormalizeEndpointDetails(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"tls and wss are authority schemes", "TLS://H:01 ", "tls://h:1"},
		{"wss", "WSS://H/P/", "wss://h/P"},
		{"scheme with digits, plus, dot and dash", "X+1.A-b://Keep/", "x+1.a-b://Keep/"},
		{"scheme starting with a digit is no scheme", "1tcp://H", "1tcp://H"},
		{"single slash is no scheme", "tcp:/H", "tcp:/H"},
		{"unbracketed IPv6 with userinfo", "tcp://U@FE80::1", "tcp://U@[fe80::1]"},
		{"bracketed host after userinfo", "tcp://u@[::A]:01/x/", "tcp://u@[::a]:1/x"},
		{"zone kept verbatim, address lower-cased", "tcp://[FE80::A%En0]", "tcp://[fe80::a%En0]"},
		{"unterminated bracket lower-cases the whole authority", "tcp://[::A/B/", "tcp://[::a/b/"},
		{"empty host with port", "tcp://:0010", "tcp://:10"},
		{"empty bracket", "tcp://[]:1", "tcp://[]:1"},
		{"port of one zero", "tcp://h:0", "tcp://h:0"},
		{"port with a non-ASCII digit stays verbatim", "tcp://h:0\u0661", "tcp://h:0\u0661"},
		{"query and fragment verbatim", "tcp://H/A/?B=C/#D/", "tcp://h/A?B=C/#D/"},
		{"fragment before query", "tcp://h/p/#f?q/", "tcp://h/p#f?q/"},
		{"path of slashes only", "tcp://h:1////", "tcp://h:1"},
		{"delimiter inside brackets is part of the host", "tcp://[a/b]:1/c/", "tcp://[a/b]:1/c"},
		{"question mark ends the authority", "tcp://H?X", "tcp://h?X"},
		{"at sign after the authority is path", "tcp://h/u@x", "tcp://h/u@x"},
		{"newline inside rest is accepted", "TCP://H\n/X/", "tcp://h\n/X"},
		{"newline in an opaque rest", "IPC://a\nB", "ipc://a\nB"},
		{"invalid UTF-8 kept verbatim", "tcp://A\xffB\xc3", "tcp://a\xffb\xc3"},
		{"non-ASCII host lower-cased", "tcp://ÉCOLE.Example", "tcp://école.example"},
		{"Kelvin sign lower-cases to k, as in JavaScript", "tcp://\u212a", "tcp://k"},
		{"sigma before a dot is not final, as in JavaScript", "tcp://ΑΣ.Β", "tcp://ασ.β"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, NormalizeEndpoint(tc.in))
		})
	}
}

// TestNormalizeEndpointTrimSet checks that trimming uses JavaScript's set
// (07-codecs §5.4), not strings.TrimSpace's.
func TestNormalizeEndpointTrimSet(t *testing.T) {
	removed := []rune{
		'\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680,
		0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
		0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF,
	}
	for _, r := range removed {
		t.Run(fmt.Sprintf("removes U+%04X", r), func(t *testing.T) {
			s := string(r)
			require.Equal(t, "tcp://h", NormalizeEndpoint(s+"TCP://H"+s))
			require.Equal(t, "x", TrimJSSpace(s+s+"x"+s))
		})
	}
	kept := []struct {
		name string
		r    rune
	}{
		{"NEL U+0085 (strings.TrimSpace removes it)", 0x0085},
		{"Mongolian vowel separator U+180E", 0x180E},
		{"zero width space U+200B", 0x200B},
		{"NUL", 0},
	}
	for _, tc := range kept {
		t.Run("keeps "+tc.name, func(t *testing.T) {
			s := string(tc.r)
			require.Equal(t, s+"x"+s, TrimJSSpace(s+"x"+s))
			require.Equal(t, "tcp://h"+s, NormalizeEndpoint("TCP://H"+s))
			require.Equal(t, s+"TCP://H", NormalizeEndpoint(s+"TCP://H"), "no scheme at the start")
		})
	}
	t.Run("invalid UTF-8 at the edges is kept", func(t *testing.T) {
		require.Equal(t, "\xff x \xff", TrimJSSpace(" \xff x \xff "))
	})
}

// TestNormalizeEndpointKnownDifferences documents where Go's Unicode lower
// case differs from JavaScript's toLowerCase (07-codecs §5.4). Only
// non-ASCII host names are affected.
func TestNormalizeEndpointKnownDifferences(t *testing.T) {
	// JavaScript gives "tcp://i\u0307stanbul" (two code points).
	require.Equal(t, "tcp://istanbul", NormalizeEndpoint("tcp://\u0130STANBUL"))
	// JavaScript gives "tcp://ας" (final sigma).
	require.Equal(t, "tcp://ασ", NormalizeEndpoint("tcp://ΑΣ"))
	require.Equal(t, "tcp://ασ:1", NormalizeEndpoint("tcp://ΑΣ:1"))
}

// TestNormalizeEndpointReferenceCorners locks in the reference's behaviour
// where normalizing once is not a fixed point (see NormalizeEndpoint).
func TestNormalizeEndpointReferenceCorners(t *testing.T) {
	tests := []struct {
		name, in, once, twice string
	}{
		{"space before removed trailing slashes", "tcp://h/a /", "tcp://h/a ", "tcp://h/a"},
		{"space before a removed empty port", "tcp://h :", "tcp://h ", "tcp://h"},
		{"space at the end of a non-numeric port", "tcp://h:1 /", "tcp://h:1 ", "tcp://h:1"},
		{"bracket inside an unbracketed IPv6 host", "tcp://a:b]c:d", "tcp://[a:b]c:d]", "tcp://[a:b]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			once := NormalizeEndpoint(tc.in)
			require.Equal(t, tc.once, once)
			require.True(t, knownNonIdempotent(tc.in, once))
			twice := NormalizeEndpoint(once)
			require.Equal(t, tc.twice, twice)
			require.Equal(t, twice, NormalizeEndpoint(twice))
		})
	}
}

// knownNonIdempotent reports whether normalizing in (giving once) falls into
// one of the two reference corner cases where once is not a fixed point: once
// ends in white space that the next call trims, or an unbracketed IPv6 host
// holds a ']' and is bracketed.
func knownNonIdempotent(in, once string) bool {
	if TrimJSSpace(once) != once {
		return true
	}
	scheme, rest, ok := splitEndpointScheme(TrimJSSpace(in))
	if !ok || !isAuthorityScheme(strings.ToLower(scheme)) {
		return false
	}
	authority := rest[:endpointAuthorityEnd(rest)]
	hostPort := authority[strings.LastIndexByte(authority, '@')+1:]
	return !strings.HasPrefix(hostPort, "[") && strings.Count(hostPort, ":") >= 2 && strings.Contains(hostPort, "]")
}

// requireEndpointProperties checks the properties NormalizeEndpoint keeps for
// every input: it is idempotent outside the two known corners, and repeated
// normalization always reaches a fixed point.
func requireEndpointProperties(t *testing.T, in string) {
	t.Helper()
	once := NormalizeEndpoint(in)
	twice := NormalizeEndpoint(once)
	if !knownNonIdempotent(in, once) {
		require.Equal(t, once, twice, "not idempotent for %q", in)
		return
	}
	cur := twice
	for i := 0; i <= len(in)+4; i++ {
		next := NormalizeEndpoint(cur)
		if next == cur {
			return
		}
		cur = next
	}
	require.Failf(t, "no fixed point", "repeated normalization of %q does not settle", in)
}

// endpointPieces returns the pieces random endpoints are built from: every
// delimiter the normalizer looks at, mixed case, digits, trim characters,
// non-ASCII text and bytes that are not UTF-8.
func endpointPieces() []string {
	return []string{
		"tcp://", "TCP://", "ws://", "WsS://", "tls://", "ipc://", "x+y://", "://", ":", "/", "?", "#", "@",
		"[", "]", "%", "0", "00", "1", "9", "a", "F", "H", "z", ".", "-", "*", " ", "\t", "\n", "\u00a0",
		"\ufeff", "\u0085", "\u2028", "\u3000", "é", "Ä", "Σ", "\u0130", "\u212a", "🚀", "\x00", "\xff",
	}
}

// TestNormalizeEndpointIdempotent is the idempotence property of 07-codecs
// §5.3 over random inputs built from endpointPieces (fixed seed).
func TestNormalizeEndpointIdempotent(t *testing.T) {
	pieces := endpointPieces()
	rng := rand.New(rand.NewPCG(7, 11))
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(16) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		requireEndpointProperties(t, b.String())
	}
}

// FuzzNormalizeEndpoint checks that NormalizeEndpoint never panics and is
// idempotent outside the two known reference corners.
func FuzzNormalizeEndpoint(f *testing.F) {
	for _, s := range []string{
		"  TCP://Example.COM:0080/  ", "tcp://[FE80::1%Eth0]:0009", "tcp://FE80::1%eth0",
		"tcp://user:PW@Host:007/Path//?Q=A/#Frag/", "tcp://[::1]x:5", "tcp://[::1", "IPC://X/",
		"tcp://h/a /", "tcp://a:b]c:d", "tcp://ΑΣ", "", "tcp://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		requireEndpointProperties(t, s)
	})
}

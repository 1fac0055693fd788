package keys

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// AuthorityKind is the discriminator of an authority key: which namespace of
// objects the key belongs to.
type AuthorityKind byte

// Authority kinds. Every spot kind (user, instance, entry) shares one
// namespace, so a spot kind does not survive a round trip through a key.
const (
	// AuthorityActor is the namespace of actors ('a').
	AuthorityActor AuthorityKind = 'a'
	// AuthoritySpot is the namespace of every spot kind ('s').
	AuthoritySpot AuthorityKind = 's'
)

// String returns the discriminator as a one-letter text.
func (k AuthorityKind) String() string { return string(rune(k)) }

// Authority key limits.
const (
	// AuthorityKeyPrefix starts every authority key (format version 1).
	AuthorityKeyPrefix = "zla1:"
	// MaxAuthorityIdentityBytes is the largest global id, in UTF-8 bytes.
	MaxAuthorityIdentityBytes = 255
	// MaxAuthorityKeyBytes is the length of the longest canonical key:
	// prefix, discriminator and ':', three digits and ':', and every byte of
	// a 255-byte id escaped as %XX.
	MaxAuthorityKeyBytes = len(AuthorityKeyPrefix) + 2 + 4 + 3*MaxAuthorityIdentityBytes
)

// Codes of the errors EncodeAuthorityKey and DecodeAuthorityKey return.
const (
	// CodeAuthorityIdentityText (shape): the global id is not valid UTF-8.
	CodeAuthorityIdentityText = "authority.identity_text"
	// CodeAuthorityIdentityLength (length): the global id is not 1..255 bytes.
	CodeAuthorityIdentityLength = "authority.identity_length"
	// CodeAuthorityKind (shape): the kind is neither AuthorityActor nor
	// AuthoritySpot.
	CodeAuthorityKind = "authority.kind"

	// CodeAuthorityTooLong (shape, decode rule 1): the key is longer than
	// MaxAuthorityKeyBytes.
	CodeAuthorityTooLong = "authority.too_long"
	// CodeAuthorityShape (shape, decode rule 2): the key is not
	// "zla1:" + a|s + ":" + 1–3 digits without a leading zero + ":" + rest.
	CodeAuthorityShape = "authority.shape"
	// CodeAuthorityDeclaredLength (shape, decode rule 3): the declared id
	// length exceeds 255.
	CodeAuthorityDeclaredLength = "authority.declared_length"
	// CodeAuthorityEscape (shape, decode rule 4): a '%' is not followed by two
	// upper-case hex digits.
	CodeAuthorityEscape = "authority.escape"
	// CodeAuthorityEscapeUnreserved (shape, decode rule 5): an escape encodes
	// a byte that must be written literally.
	CodeAuthorityEscapeUnreserved = "authority.escape_unreserved"
	// CodeAuthorityLiteral (shape, decode rule 6): a literal byte that must be
	// escaped.
	CodeAuthorityLiteral = "authority.literal"
	// CodeAuthorityLengthMismatch (shape, decode rule 7): the decoded id's
	// byte count differs from the declared length.
	CodeAuthorityLengthMismatch = "authority.length_mismatch"
	// CodeAuthorityUTF8 (shape, decode rule 8): the decoded id is not valid
	// UTF-8.
	CodeAuthorityUTF8 = "authority.utf8"
)

// upperHex holds the digits of the %XX escapes.
const upperHex = "0123456789ABCDEF"

// EncodeAuthorityKey returns the canonical authority key of a global id:
// "zla1:" + kind + ":" + the id's byte length + ":" + the id's bytes, each
// unreserved byte (A–Z a–z 0–9 - . _ ~) written literally and every other
// byte as %XX with upper-case hex. The id must be valid UTF-8 (shape error
// otherwise) of 1..255 bytes (length error otherwise). No case folding and no
// Unicode normalisation take place; NUL is allowed (it becomes %00).
func EncodeAuthorityKey(kind AuthorityKind, globalID string) (string, error) {
	if kind != AuthorityActor && kind != AuthoritySpot {
		return "", codecError(ProblemShape, CodeAuthorityKind, "authority kind 0x"+hexByte(byte(kind))+" is neither 'a' nor 's'")
	}
	if !utf8.ValidString(globalID) {
		return "", codecError(ProblemShape, CodeAuthorityIdentityText, "authority identity is not valid UTF-8")
	}
	if len(globalID) < 1 || len(globalID) > MaxAuthorityIdentityBytes {
		return "", codecError(ProblemLength, CodeAuthorityIdentityLength, "authority identity must contain 1..255 UTF-8 bytes, got "+strconv.Itoa(len(globalID)))
	}
	var b strings.Builder
	b.Grow(len(AuthorityKeyPrefix) + 6 + 3*len(globalID))
	b.WriteString(AuthorityKeyPrefix)
	b.WriteByte(byte(kind))
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(len(globalID)))
	b.WriteByte(':')
	for i := 0; i < len(globalID); i++ {
		c := globalID[i]
		if isUnreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0x0f])
	}
	return b.String(), nil
}

// DecodeAuthorityKey parses a canonical authority key strictly and returns its
// kind and global id. It accepts exactly the keys EncodeAuthorityKey produces;
// anything else is a shape error. The rules are checked in this order:
//
//  1. the key is at most MaxAuthorityKeyBytes bytes (CodeAuthorityTooLong);
//  2. it reads "zla1:" + a|s + ":" + a length of 1–3 digits whose first digit
//     is not 0 + ":" + rest, where rest holds no line terminator (CR, LF,
//     U+2028, U+2029), as in the reference's pattern (CodeAuthorityShape);
//  3. the declared length is at most 255 (CodeAuthorityDeclaredLength);
//  4. rest is scanned from the left; the first bad position decides:
//     a '%' not followed by two upper-case hex digits (CodeAuthorityEscape),
//     an escape of an unreserved byte (CodeAuthorityEscapeUnreserved), or a
//     literal byte that is not unreserved (CodeAuthorityLiteral);
//  5. the decoded byte count equals the declared length
//     (CodeAuthorityLengthMismatch);
//  6. the decoded bytes are valid UTF-8 (CodeAuthorityUTF8).
//
// Unlike the reference, a leading byte-order mark is kept: the id is exactly
// the decoded bytes, so every decoded key re-encodes to itself.
func DecodeAuthorityKey(key string) (AuthorityKind, string, error) {
	if len(key) > MaxAuthorityKeyBytes {
		return 0, "", codecError(ProblemShape, CodeAuthorityTooLong, "authority key has "+strconv.Itoa(len(key))+" bytes, more than 776")
	}
	kind, declared, rest, ok := splitAuthorityKey(key)
	if !ok {
		return 0, "", codecError(ProblemShape, CodeAuthorityShape, "authority key is not of the form zla1:<a|s>:<length>:<identity>")
	}
	if declared > MaxAuthorityIdentityBytes {
		return 0, "", codecError(ProblemShape, CodeAuthorityDeclaredLength, "authority key declares "+strconv.Itoa(declared)+" identity bytes, more than 255")
	}
	// id stays nil while every byte is a literal one: the identity is then
	// rest itself, without a copy (unreserved bytes are ASCII, so valid
	// UTF-8).
	var id []byte
	for i := 0; i < len(rest); {
		c := rest[i]
		if c != '%' {
			if !isUnreserved(c) {
				return 0, "", codecError(ProblemShape, CodeAuthorityLiteral, "authority key byte 0x"+hexByte(c)+" at identity offset "+strconv.Itoa(i)+" must be escaped")
			}
			if id != nil {
				id = append(id, c)
			}
			i++
			continue
		}
		if i+2 >= len(rest) || !isUpperHexDigit(rest[i+1]) || !isUpperHexDigit(rest[i+2]) {
			return 0, "", codecError(ProblemShape, CodeAuthorityEscape, "authority key '%' at identity offset "+strconv.Itoa(i)+" is not followed by two upper-case hex digits")
		}
		v := unhex(rest[i+1])<<4 | unhex(rest[i+2])
		if isUnreserved(v) {
			return 0, "", codecError(ProblemShape, CodeAuthorityEscapeUnreserved, "authority key escape "+rest[i:i+3]+" at identity offset "+strconv.Itoa(i)+" encodes a byte that must be literal")
		}
		if id == nil {
			id = append(make([]byte, 0, len(rest)), rest[:i]...)
		}
		id = append(id, v)
		i += 3
	}
	n := len(rest)
	if id != nil {
		n = len(id)
	}
	if n != declared {
		return 0, "", codecError(ProblemShape, CodeAuthorityLengthMismatch, "authority key declares "+strconv.Itoa(declared)+" identity bytes but holds "+strconv.Itoa(n))
	}
	if id == nil {
		return kind, rest, nil
	}
	if !utf8.Valid(id) {
		return 0, "", codecError(ProblemShape, CodeAuthorityUTF8, "authority key identity is not valid UTF-8")
	}
	return kind, string(id), nil
}

// splitAuthorityKey matches the key's outer form (decode rule 2) and returns
// its kind, declared length and percent-encoded rest.
func splitAuthorityKey(key string) (kind AuthorityKind, declared int, rest string, ok bool) {
	s, found := strings.CutPrefix(key, AuthorityKeyPrefix)
	if !found || len(s) < 2 || (s[0] != byte(AuthorityActor) && s[0] != byte(AuthoritySpot)) || s[1] != ':' {
		return 0, 0, "", false
	}
	kind = AuthorityKind(s[0])
	s = s[2:]
	n := 0
	for n < len(s) && n < 4 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n < 1 || n > 3 || s[0] == '0' || n == len(s) || s[n] != ':' {
		return 0, 0, "", false
	}
	for i := 0; i < n; i++ {
		declared = declared*10 + int(s[i]-'0')
	}
	rest = s[n+1:]
	if hasLineTerminator(rest) {
		return 0, 0, "", false
	}
	return kind, declared, rest, true
}

// hasLineTerminator reports whether s holds a character that a JavaScript
// regular expression's '.' does not match: LF, CR, U+2028 or U+2029.
func hasLineTerminator(s string) bool {
	return strings.ContainsAny(s, "\n\r\u2028\u2029")
}

// isUnreserved reports whether an authority key writes byte c literally:
// A–Z, a–z, 0–9, '-', '.', '_' and '~'.
func isUnreserved(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// isUpperHexDigit reports whether c is one of 0–9 or A–F.
func isUpperHexDigit(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

// hexByte returns c as two upper-case hex digits.
func hexByte(c byte) string { return string([]byte{upperHex[c>>4], upperHex[c&0x0f]}) }

// unhex returns the value of an upper-case hex digit.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

package keys

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// TrimJSSpace removes leading and trailing white space exactly as
// JavaScript's String.prototype.trim does: TAB, LF, VT, FF, CR, SPACE,
// U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 and
// U+FEFF. Unlike strings.TrimSpace it removes U+FEFF and keeps U+0085 (NEL).
// Bytes that are not valid UTF-8 are never removed.
func TrimJSSpace(s string) string {
	return strings.TrimFunc(s, isJSSpace)
}

// isJSSpace reports whether JavaScript's trim removes r (its WhiteSpace and
// LineTerminator productions).
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ',
		0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// lowerText lower-cases text rune by rune with Go's Unicode simple case
// mapping (unicode.ToLower), keeping bytes that are not valid UTF-8
// verbatim. For ASCII it equals JavaScript's toLowerCase. Beyond ASCII it
// differs from JavaScript in two known places, which this port accepts
// (07-codecs §5.4; non-ASCII host names are not expected in practice):
//   - U+0130 (İ) becomes "i" here, "i" + U+0307 in JavaScript;
//   - a final capital sigma becomes σ here, ς in JavaScript ("ΑΣ" gives
//     "ασ" here, "ας" there).
func lowerText(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteByte(s[i])
			i++
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		i += size
	}
	return b.String()
}

package keys

import (
	"strconv"
	"strings"
)

// Segments concatenates each part as "<decimal byte length>:<bytes>". The
// result is self-delimiting: Segments(a) is a prefix of exactly the keys whose
// first part is a.
func Segments(parts ...string) string { return prefixedSegments("", "", parts...) }

// prefixedSegments returns a + b + Segments(parts...), built in one
// allocation.
func prefixedSegments(a, b string, parts ...string) string {
	n := len(a) + len(b)
	for _, p := range parts {
		n += len(p) + 1 + decimalDigits(len(p))
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteString(a)
	sb.WriteString(b)
	var digits [20]byte
	for _, p := range parts {
		sb.Write(strconv.AppendInt(digits[:0], int64(len(p)), 10))
		sb.WriteByte(':')
		sb.WriteString(p)
	}
	return sb.String()
}

// decimalDigits returns the number of decimal digits of n ≥ 0.
func decimalDigits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// Codes of the errors DecodeSegments returns (all ProblemShape).
const (
	// CodeSegmentsColon: a segment's length has no ':' after it.
	CodeSegmentsColon = "segments.colon"
	// CodeSegmentsLength: a segment's length is empty or holds a non-digit.
	CodeSegmentsLength = "segments.length"
	// CodeSegmentsLeadingZero: a segment's length has a leading zero.
	CodeSegmentsLeadingZero = "segments.leading_zero"
	// CodeSegmentsOverrun: a segment's length exceeds the bytes that remain.
	CodeSegmentsOverrun = "segments.overrun"
)

// DecodeSegments splits a key written by Segments back into its parts. It
// works on bytes: each part is "<decimal byte length>:<bytes>", the length
// has no sign and no leading zero (except "0" itself), and the parts must use
// up the input exactly. The empty input has no parts. Part contents are not
// checked (they may hold any byte, ':' and digits included), so
// Segments(DecodeSegments(s)...) == s whenever decoding succeeds.
func DecodeSegments(s string) ([]string, error) {
	parts := []string{}
	for pos := 0; pos < len(s); {
		start := pos
		for pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos == len(s) {
			return nil, codecError(ProblemShape, CodeSegmentsColon, "segment at byte "+strconv.Itoa(start)+" has no ':' after its length")
		}
		if s[pos] != ':' || pos == start {
			return nil, codecError(ProblemShape, CodeSegmentsLength, "segment at byte "+strconv.Itoa(start)+" does not start with a decimal length")
		}
		digits := s[start:pos]
		if len(digits) > 1 && digits[0] == '0' {
			return nil, codecError(ProblemShape, CodeSegmentsLeadingZero, "segment length at byte "+strconv.Itoa(start)+" has a leading zero")
		}
		pos++ // the ':'
		remaining := len(s) - pos
		n := 0
		for i := 0; i < len(digits); i++ {
			n = n*10 + int(digits[i]-'0')
			if n > remaining {
				return nil, codecError(ProblemShape, CodeSegmentsOverrun, "segment length at byte "+strconv.Itoa(start)+" exceeds the "+strconv.Itoa(remaining)+" bytes that remain")
			}
		}
		parts = append(parts, s[pos:pos+n])
		pos += n
	}
	return parts, nil
}

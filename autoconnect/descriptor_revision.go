package autoconnect

import (
	"math/big"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// ParseDescriptorRevision parses text the way JavaScript's BigInt parses a
// string, and returns the value when it is positive, nil otherwise (empty
// text, zero, negative, or not an integer).
//
// Accepted: surrounding JavaScript white space; decimal digits with an
// optional sign; "0x", "0o" or "0b" (either case) followed by digits of that
// base, without a sign. Rejected: fractions, exponents, underscores. There is
// no upper bound.
func ParseDescriptorRevision(text string) *big.Int {
	v, ok := parseJSBigInt(text)
	if !ok || v.Sign() <= 0 {
		return nil
	}
	return v
}

// parseJSBigInt implements JavaScript's StringToBigInt.
func parseJSBigInt(text string) (*big.Int, bool) {
	s := keys.TrimJSSpace(text)
	if s == "" {
		return new(big.Int), true
	}
	base := 10
	digits := s
	if len(s) >= 2 && s[0] == '0' {
		switch s[1] {
		case 'x', 'X':
			base, digits = 16, s[2:]
		case 'o', 'O':
			base, digits = 8, s[2:]
		case 'b', 'B':
			base, digits = 2, s[2:]
		}
	}
	negative := false
	if base == 10 && (digits[0] == '+' || digits[0] == '-') {
		negative = digits[0] == '-'
		digits = digits[1:]
	}
	if digits == "" {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		if digitValue(digits[i]) >= base {
			return nil, false
		}
	}
	v, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, false
	}
	if negative {
		v.Neg(v)
	}
	return v, true
}

// digitValue returns the value of an ASCII digit or letter (a=10 … z=35),
// or 36 for anything else.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	default:
		return 36
	}
}

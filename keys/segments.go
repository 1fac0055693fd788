package keys

import "strconv"

// Segments concatenates each part as "<decimal byte length>:<bytes>". The
// result is self-delimiting: Segments(a) is a prefix of exactly the keys whose
// first part is a.
func Segments(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p) + 4
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = strconv.AppendInt(b, int64(len(p)), 10)
		b = append(b, ':')
		b = append(b, p...)
	}
	return string(b)
}

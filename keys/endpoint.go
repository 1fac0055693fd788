package keys

import "strings"

// NormalizeEndpoint returns the canonical notation of a transport endpoint,
// the form in which endpoints are stored and compared (plain string
// equality). It follows the framework's endpoint-notation policy exactly:
//
//  1. Surrounding whitespace is removed, with JavaScript's trim set
//     (TrimJSSpace).
//  2. Text that is not "scheme://rest" (scheme = a letter, then letters,
//     digits, '+', '.', '-') is returned as trimmed.
//  3. The scheme is lower-cased.
//  4. Schemes other than tcp, tls, ws and wss (ipc, inproc, udp, unknown
//     ones) keep rest verbatim.
//  5. Otherwise rest splits into authority and suffix: the authority ends at
//     the first '/', '?' or '#'; when rest starts with '[' the search starts
//     at the first ']' (without a ']' all of rest is authority).
//  6. Userinfo, up to and including the authority's last '@', is kept
//     verbatim.
//  7. The remainder splits into host and port: "[...]" is the host up to the
//     first ']', and the port is what follows "]:" (anything else after the
//     ']' is dropped); with two or more ':' and no bracket the whole text is
//     an IPv6 host without port and gets bracketed; with one ':' host and
//     port are either side of it; with none there is no port.
//  8. A bracketed host is lower-cased except for a "%zone" suffix, which is
//     kept verbatim; any other host is lower-cased whole. Lower case is
//     Unicode's simple mapping, which equals JavaScript's toLowerCase except
//     for two known differences (07-codecs §5.4): U+0130 gives "i" (JS: "i"
//     + U+0307) and a final capital sigma gives σ (JS: ς).
//  9. A port of decimal digits loses its leading zeros (one digit stays);
//     any other port is kept verbatim; an empty port writes no ':'.
//  10. In the suffix, trailing '/' are removed from the path (before any
//     '?query' or '#fragment'); query and fragment are kept verbatim.
//
// DNS names are never resolved. The function never fails and keeps bytes
// that are not valid UTF-8 verbatim.
//
// Like the reference, it is not lossless (an empty port, junk between ']'
// and ':', and trailing slashes disappear), and it is idempotent except in
// two reference corner cases, which Go reproduces: when the result ends in
// whitespace that was followed by a removed part ("tcp://h/a /" gives
// "tcp://h/a ", which the next call trims), and when an unbracketed IPv6
// host holds a ']' ("tcp://a:b]c:d" gives "tcp://[a:b]c:d]", which the next
// call reads as host "[a:b]").
func NormalizeEndpoint(s string) string {
	trimmed := TrimJSSpace(s)
	scheme, rest, ok := splitEndpointScheme(trimmed)
	if !ok {
		return trimmed
	}
	scheme = strings.ToLower(scheme) // ASCII only, by splitEndpointScheme
	if !isAuthorityScheme(scheme) {
		return scheme + "://" + rest
	}
	end := endpointAuthorityEnd(rest)
	authority, suffix := rest[:end], rest[end:]
	userinfo, hostPort := "", authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo, hostPort = authority[:at+1], authority[at+1:]
	}
	host, port := splitEndpointHostPort(hostPort)
	host = normalizeEndpointHost(host)
	port = normalizeEndpointPort(port)

	var b strings.Builder
	b.Grow(len(trimmed) + 2)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(userinfo)
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(normalizeEndpointSuffix(suffix))
	return b.String()
}

// splitEndpointScheme matches "scheme://rest" with scheme
// [A-Za-z][A-Za-z0-9+.-]*. Rest may hold anything, newlines included.
func splitEndpointScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isASCIILetter(s[0]) {
		return "", "", false
	}
	i := 1
	for i < len(s) && (isASCIILetter(s[i]) || isASCIIDigit(s[i]) || s[i] == '+' || s[i] == '.' || s[i] == '-') {
		i++
	}
	if !strings.HasPrefix(s[i:], "://") {
		return "", "", false
	}
	return s[:i], s[i+3:], true
}

// isAuthorityScheme reports whether what follows "scheme://" is host:port
// (tcp, tls, ws, wss); other schemes keep their rest verbatim.
func isAuthorityScheme(lowerScheme string) bool {
	switch lowerScheme {
	case "tcp", "tls", "ws", "wss":
		return true
	default:
		return false
	}
}

// endpointAuthorityEnd returns where the authority of rest ends: at the
// first '/', '?' or '#', searched from the first ']' when rest starts with
// '['; the whole of rest when there is no such delimiter, or no ']' after a
// leading '['.
func endpointAuthorityEnd(rest string) int {
	from := 0
	if strings.HasPrefix(rest, "[") {
		from = strings.IndexByte(rest, ']')
		if from < 0 {
			return len(rest)
		}
	}
	if d := strings.IndexAny(rest[from:], "/?#"); d >= 0 {
		return from + d
	}
	return len(rest)
}

// splitEndpointHostPort splits the authority without userinfo into host and
// port (rule 7 of NormalizeEndpoint).
func splitEndpointHostPort(hostPort string) (host, port string) {
	if strings.HasPrefix(hostPort, "[") {
		end := strings.IndexByte(hostPort, ']')
		if end < 0 {
			return hostPort, ""
		}
		after := hostPort[end+1:]
		if p, ok := strings.CutPrefix(after, ":"); ok {
			return hostPort[:end+1], p
		}
		return hostPort[:end+1], ""
	}
	if strings.Count(hostPort, ":") >= 2 {
		return "[" + hostPort + "]", ""
	}
	if h, p, ok := strings.Cut(hostPort, ":"); ok {
		return h, p
	}
	return hostPort, ""
}

// normalizeEndpointHost lower-cases a host, keeping the "%zone" of a
// bracketed host verbatim.
func normalizeEndpointHost(host string) string {
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		inner := host[1 : len(host)-1]
		address, zone := inner, ""
		if z := strings.IndexByte(inner, '%'); z >= 0 {
			address, zone = inner[:z], inner[z:]
		}
		return "[" + lowerText(address) + zone + "]"
	}
	return lowerText(host)
}

// normalizeEndpointPort strips the leading zeros of a decimal port, keeping
// one digit; any other port is returned verbatim.
func normalizeEndpointPort(port string) string {
	if port == "" {
		return port
	}
	for i := 0; i < len(port); i++ {
		if !isASCIIDigit(port[i]) {
			return port
		}
	}
	i := 0
	for i < len(port)-1 && port[i] == '0' {
		i++
	}
	return port[i:]
}

// normalizeEndpointSuffix removes the trailing '/' of the path part of a
// suffix ("/path?query#fragment"), keeping query and fragment verbatim.
func normalizeEndpointSuffix(suffix string) string {
	beforeFragment, fragment := suffix, ""
	if i := strings.IndexByte(suffix, '#'); i >= 0 {
		beforeFragment, fragment = suffix[:i], suffix[i:]
	}
	path, query := beforeFragment, ""
	if i := strings.IndexByte(beforeFragment, '?'); i >= 0 {
		path, query = beforeFragment[:i], beforeFragment[i:]
	}
	return strings.TrimRight(path, "/") + query + fragment
}

// isASCIILetter reports whether c is A–Z or a–z.
func isASCIILetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// isASCIIDigit reports whether c is 0–9.
func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

package keys

import (
	"errors"
	"fmt"
)

// ErrMalformed classifies every error of this package: the input could not be
// encoded or decoded. Every *CodecError wraps it (errors.Is(err, ErrMalformed)).
var ErrMalformed = errors.New("keys: malformed input")

// Problem says what kind of violation a CodecError reports. Package location
// maps it onto its error classes (length → range, shape → type).
type Problem int

// Problems.
const (
	// ProblemShape reports text of the wrong form: a bad character, escape,
	// digit run, discriminator, or byte count that disagrees with a declared
	// length. Every decoding rejection is a shape problem.
	ProblemShape Problem = iota + 1
	// ProblemLength reports a value whose size is outside the bounds the
	// encoder accepts.
	ProblemLength
)

// String returns "shape" or "length".
func (p Problem) String() string {
	switch p {
	case ProblemShape:
		return "shape"
	case ProblemLength:
		return "length"
	default:
		return fmt.Sprintf("Problem(%d)", int(p))
	}
}

// CodecError describes one rejected input of a codec. It wraps ErrMalformed.
type CodecError struct {
	// Problem is the kind of violation.
	Problem Problem
	// Code is a stable short identifier such as "authority.escape"; callers
	// may switch on it. The codes are listed next to each codec.
	Code string
	// Message says in words what was wrong.
	Message string
}

// Error implements error.
func (e *CodecError) Error() string {
	return fmt.Sprintf("keys: %s (%s, %s)", e.Message, e.Code, e.Problem)
}

// Unwrap makes errors.Is(err, ErrMalformed) hold.
func (e *CodecError) Unwrap() error { return ErrMalformed }

// codecError returns a CodecError with a ready message. The decoders build
// their messages without package fmt, so that a fuzzer's coverage guidance
// follows the codec and not fmt's formatting of each input.
func codecError(problem Problem, code, message string) *CodecError {
	return &CodecError{Problem: problem, Code: code, Message: message}
}

// shapeError returns a CodecError of ProblemShape.
func shapeError(code, format string, args ...any) *CodecError {
	return &CodecError{Problem: ProblemShape, Code: code, Message: fmt.Sprintf(format, args...)}
}

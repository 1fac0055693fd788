package keys

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCodecError checks the error type's text, classification and wrapping.
func TestCodecError(t *testing.T) {
	err := error(&CodecError{Problem: ProblemLength, Code: "authority.identity_length", Message: "too long"})
	require.Equal(t, "keys: too long (authority.identity_length, length)", err.Error())
	require.ErrorIs(t, err, ErrMalformed)
	require.ErrorIs(t, fmt.Errorf("outer: %w", err), ErrMalformed)
	var ce *CodecError
	require.True(t, errors.As(fmt.Errorf("outer: %w", err), &ce))
	require.Equal(t, ProblemLength, ce.Problem)

	require.Equal(t, "shape", ProblemShape.String())
	require.Equal(t, "length", ProblemLength.String())
	require.Equal(t, "Problem(9)", Problem(9).String())
	require.Equal(t, "keys: malformed input", ErrMalformed.Error())
	require.NotErrorIs(t, errors.New("keys: malformed input"), ErrMalformed)
}

// requireCodecError checks that err is a *CodecError wrapping ErrMalformed
// with the given problem and code.
func requireCodecError(t *testing.T, err error, problem Problem, code string) {
	t.Helper()
	require.ErrorIs(t, err, ErrMalformed)
	var ce *CodecError
	require.True(t, errors.As(err, &ce), "error %v is not a *CodecError", err)
	require.Equal(t, problem, ce.Problem)
	require.Equal(t, code, ce.Code)
	require.NotEmpty(t, ce.Message)
}

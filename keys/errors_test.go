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

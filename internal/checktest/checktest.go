// Package checktest holds the assertion that the options tables of the
// harness packages (bench, demo, meshbench) share.
package checktest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// RequireResult asserts the result of a check: no error when wantErr is
// empty, otherwise an error whose text contains wantErr and that wraps
// every one of sentinels.
func RequireResult(t testing.TB, err error, wantErr string, sentinels ...error) {
	t.Helper()
	if wantErr == "" {
		require.NoError(t, err)
		return
	}
	for _, s := range sentinels {
		require.ErrorIs(t, err, s)
	}
	require.ErrorContains(t, err, wantErr)
}

// Package checktest runs the options tables that the harness packages
// (bench, demo, meshbench) share the shape of.
package checktest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Checker is an options value that reports whether it is usable.
type Checker interface{ Check() error }

// Case is one row of an options table: Opts.Check must succeed when
// WantErr is empty, otherwise fail with an error whose text contains
// WantErr.
type Case[O Checker] struct {
	Name    string
	Opts    O
	WantErr string
}

// Run runs every case as a subtest; a failing check must also wrap every
// one of sentinels.
func Run[O Checker](t *testing.T, cases []Case[O], sentinels ...error) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			err := tc.Opts.Check()
			if tc.WantErr == "" {
				require.NoError(t, err)
				return
			}
			for _, s := range sentinels {
				require.ErrorIs(t, err, s)
			}
			require.ErrorContains(t, err, tc.WantErr)
		})
	}
}

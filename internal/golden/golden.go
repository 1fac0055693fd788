// Package golden compares bytes a test produced with a golden file, or,
// when the test binary runs with -update, rewrites the file: the stored
// format's tests pin their bytes with it (docs/key-layout.md).
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update is the -update flag of every test binary that imports the
// package.
var update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Check compares got with the file at path (relative to the test's
// package), or rewrites it under -update. regenerate is the command that
// does so, named in the failure.
func Check(t testing.TB, path string, got []byte, regenerate string) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file %s: run %s", path, regenerate)
	require.Equal(t, string(want), string(got), "%s changed: the stored format changed (if deliberate, run %s and review the diff)", path, regenerate)
}

package doccheck_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/doccheck"
)

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "go.mod not found above the test's directory")
		dir = parent
	}
}

type place struct {
	file string
	line int
}

func (p place) String() string { return fmt.Sprintf("%s:%d", p.file, p.line) }

// definitions reads every table of docs/*.md.
func definitions(t *testing.T, root string) map[string][]place {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no docs/*.md under %s", root)
	defs := map[string][]place{}
	for _, f := range files {
		md, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, f)
		for _, d := range doccheck.ParseDefinitions(md) {
			defs[d.Key] = append(defs[d.Key], place{rel, d.Line})
		}
	}
	return defs
}

// TestCitationsAreDefined fails for every citation in a Go file of the
// module that no docs/ table defines. The grammar's own examples (this
// package) are not read.
func TestCitationsAreDefined(t *testing.T) {
	root := moduleRoot(t)
	defs := definitions(t, root)
	self := filepath.Join(root, "internal", "doccheck")
	var missing []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor" || path == self) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, c := range doccheck.ScanGo(src) {
			switch {
			case c.Problem != "":
				missing = append(missing, fmt.Sprintf("%s:%d: %s", rel, c.Line, c.Problem))
			case len(defs[c.Key]) == 0:
				missing = append(missing, fmt.Sprintf("%s:%d: %q is cited but no table row under docs/ defines it (add it to docs/decisions.md)", rel, c.Line, c.Key))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "too few Go files under %s: wrong root?", root)
	if len(missing) > 0 {
		t.Errorf("%d citation(s) not defined under docs/:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// TestRegisterIDsDefinedOnce fails when a register ID is the key of more
// than one docs/ row: each fact has one place.
func TestRegisterIDsDefinedOnce(t *testing.T) {
	defs := definitions(t, moduleRoot(t))
	var twice []string
	for key, places := range defs {
		if doccheck.IsRegisterID(key) && len(places) > 1 {
			twice = append(twice, fmt.Sprintf("%s defined at %v", key, places))
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("register IDs defined more than once:\n%s", strings.Join(twice, "\n"))
	}
}

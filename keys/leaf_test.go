package keys

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLeafPackage checks that package keys imports no package of this
// module (docs/architecture.md: keys depends on nothing; location wraps it).
func TestLeafPackage(t *testing.T) {
	const module = "github.com/zlink-systems/zlink-etcd"
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			require.False(t, path == module || strings.HasPrefix(path, module+"/"), "%s imports %s", name, path)
		}
	}
}

package rules_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	filledpkg "github.com/zlink-systems/zlink-etcd/internal/filled"
	"github.com/zlink-systems/zlink-etcd/keys"
	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
)

// Every Table constant declared in packages location and rules has an entry
// in the table registry, and every entry a constant: a table added in one
// place but not the other fails here.
func TestRegistryDeclaresEveryTable(t *testing.T) {
	declared := map[string]bool{}
	for _, dir := range []string{".", "../location"} {
		for _, value := range tableConstants(t, dir) {
			declared[value] = true
		}
	}
	registered := map[string]bool{}
	for _, spec := range rules.Tables() {
		registered[string(spec.Name())] = true
		require.NoError(t, keys.ValidTable(string(spec.Name())), "a table name is a key segment")
		got, ok := rules.Lookup(spec.Name())
		require.True(t, ok)
		require.Same(t, spec, got)
	}
	require.Equal(t, declared, registered)
	require.Len(t, registered, 16)
}

// The classes of the tables, and the orders the sweeps rely on.
func TestRegistryClasses(t *testing.T) {
	locationTables := []location.Table{location.TableMeshNodes, location.TablePeers, location.TableSpots,
		location.TableActors, location.TableRoutes, location.TableClientServers, location.TableFanoutPublishers}
	require.Equal(t, locationTables, rules.LocationTables(), "the reference's sweep order (03 §2)")
	require.Equal(t, append([]location.Table{rules.TableAuthority}, locationTables...), rules.OwnedTables())
	for _, spec := range rules.Tables() {
		isLocation := slices.Contains(locationTables, spec.Name())
		require.Equal(t, isLocation, spec.Location(), spec.Name())
		require.Equal(t, isLocation || spec.Name() == rules.TableAuthority, spec.Owned(), spec.Name())
	}
	rules.LocationTables()[0] = "changed"
	require.Equal(t, location.TableMeshNodes, rules.LocationTables()[0], "callers get copies")
}

// Owner ids come from the row; other tables and other types have none.
func TestRegistryOwnerIDs(t *testing.T) {
	for _, spec := range rules.Tables() {
		v := filled(spec.Type())
		owner, ok := spec.OwnerID(v)
		require.Equal(t, spec.Owned(), ok, spec.Name())
		if ok {
			require.Equal(t, "x", owner, spec.Name())
		}
		_, ok = spec.OwnerID(struct{}{})
		require.False(t, ok)
		_, ok = rules.RowOwnerID(v)
		require.Equal(t, spec.Location(), ok, "RowOwnerID is for location rows only: %s", spec.Name())
	}
}

// A value survives its JSON, in one pass (ValueSlot) and in two
// (DecodeJSON); a slot given null or nothing stays empty.
func TestRegistryJSON(t *testing.T) {
	for _, spec := range rules.Tables() {
		t.Run(string(spec.Name()), func(t *testing.T) {
			v := filled(spec.Type())
			if row, ok := v.(rules.AuthorityRow); ok {
				row.StoreVersion = "" // not encoded by the stores; kept by JSON anyway
				v = row
			}
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			got, err := spec.DecodeJSON(raw)
			require.NoError(t, err)
			require.Equal(t, v, got)

			for doc, want := range map[string]bool{`{"value":` + string(raw) + `}`: true, `{"value":null}`: false, `{}`: false} {
				slot := spec.NewValueSlot()
				env := struct {
					Value any `json:"value"`
				}{Value: slot.Target()}
				require.NoError(t, json.Unmarshal([]byte(doc), &env))
				got, ok := slot.Value()
				require.Equal(t, want, ok, doc)
				if want {
					require.Equal(t, v, got)
				}
			}
		})
	}
}

// Every table's copy equals its original and shares no memory with it:
// every pointer, slice and map reachable from a value whose fields are all
// set is a different one in the copy, so a reference field added to a value
// type without a copy in its Clone fails here.
func TestRegistryClonesShareNoMemory(t *testing.T) {
	for _, spec := range rules.Tables() {
		t.Run(string(spec.Name()), func(t *testing.T) {
			v := filled(spec.Type())
			require.True(t, spec.Holds(v))
			cp := spec.Clone(v)
			require.Equal(t, v, cp)
			requireNoSharedMemory(t, reflect.ValueOf(v), reflect.ValueOf(cp), spec.Name())
		})
	}
	require.Equal(t, "not a row", rules.Tables()[0].Clone("not a row"), "other values are returned as they are")
}

// No code outside the registry lists tables: a composite literal or a switch
// that names three or more Table constants is a list of tables, which must
// derive from the registry instead (rules.Tables, LocationTables,
// OwnedTables, Lookup). Tests may list tables (they pin behaviour).
func TestNoTableListOutsideRegistry(t *testing.T) {
	// pending names lists that other work will replace; each says by what.
	pending := map[string]string{}
	names := map[string]bool{}
	for _, dir := range []string{".", "../location"} {
		for name := range tableConstants(t, dir) {
			names[name] = true
		}
	}
	var lists []string
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "rules/tables.go" {
			return nil
		}
		if _, ok := pending[rel]; ok {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var count int
			switch n := n.(type) {
			case *ast.CompositeLit:
				count = tableRefs(names, n.Elts...)
			case *ast.SwitchStmt:
				for _, s := range n.Body.List {
					count += tableRefs(names, s.(*ast.CaseClause).List...)
				}
			default:
				return true
			}
			if count >= 3 {
				lists = append(lists, fmt.Sprintf("%s: a list of %d tables", rel, count))
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, lists, "derive these from the table registry (rules/tables.go)")
}

// tableRefs counts the expressions that name a Table constant.
func tableRefs(names map[string]bool, exprs ...ast.Expr) int {
	n := 0
	for _, e := range exprs {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			e = kv.Key
		}
		switch x := e.(type) {
		case *ast.Ident:
			if names[x.Name] {
				n++
			}
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && (pkg.Name == "rules" || pkg.Name == "location") && names[x.Sel.Name] {
				n++
			}
		}
	}
	return n
}

// tableConstants returns the Table constants declared in the non-test
// files of dir: name → value.
func tableConstants(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Table" {
					continue
				}
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					require.True(t, ok, "%s: table %s is not a string literal", path, name.Name)
					value, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					out[name.Name] = value
				}
			}
		}
	}
	return out
}

// filled returns a value of typ with every exported field set.
func filled(typ reflect.Type) any { return filledpkg.Value(typ) }

// requireNoSharedMemory walks a and b (equal values) in step and fails
// where they share a pointer, a slice's array or a map.
func requireNoSharedMemory(t *testing.T, a, b reflect.Value, path any) {
	t.Helper()
	if a.Type() == reflect.TypeFor[time.Time]() {
		return // immutable
	}
	switch a.Kind() {
	case reflect.Interface:
		if !a.IsNil() {
			requireNoSharedMemory(t, a.Elem(), b.Elem(), path)
		}
	case reflect.Pointer:
		if a.IsNil() {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: pointer shared", path)
		requireNoSharedMemory(t, a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				requireNoSharedMemory(t, a.Field(i), b.Field(i), fmt.Sprint(path, ".", a.Type().Field(i).Name))
			}
		}
	case reflect.Slice:
		if a.Len() == 0 {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: slice shared", path)
		for i := range a.Len() {
			requireNoSharedMemory(t, a.Index(i), b.Index(i), path)
		}
	case reflect.Map:
		if a.Len() == 0 {
			return
		}
		require.NotEqual(t, a.Pointer(), b.Pointer(), "%v: map shared", path)
		iter := a.MapRange()
		for iter.Next() {
			requireNoSharedMemory(t, iter.Value(), b.MapIndex(iter.Key()), path)
		}
	}
}

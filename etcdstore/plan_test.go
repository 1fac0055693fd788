package etcdstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/rules"
)

// A commit writes each key once, where the plan first wrote it, with the
// value the plan wrote last.
func TestLastWrites(t *testing.T) {
	w := func(table rules.Table, key string, value any) rules.Write {
		return rules.Write{Table: table, Key: key, Value: value}
	}
	cases := []struct {
		name string
		in   []rules.Write
		want []rules.Write
	}{
		{"none", nil, nil},
		{"one", []rules.Write{w("a", "k", 1)}, []rules.Write{w("a", "k", 1)}},
		{"distinct", []rules.Write{w("a", "k", 1), w("b", "k", 2), w("a", "j", 3)},
			[]rules.Write{w("a", "k", 1), w("b", "k", 2), w("a", "j", 3)}},
		{"rewritten", []rules.Write{w("a", "k", 1), w("a", "j", 2), w("a", "k", 3)},
			[]rules.Write{w("a", "k", 3), w("a", "j", 2)}},
		{"rewritten, then new keys", []rules.Write{w("a", "k", 1), w("a", "k", nil), w("a", "j", 2), w("a", "i", 3), w("a", "j", 4)},
			[]rules.Write{w("a", "k", nil), w("a", "j", 4), w("a", "i", 3)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, lastWrites(tc.in))
		})
	}
}

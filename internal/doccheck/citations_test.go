package doccheck_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/internal/doccheck"
)

// The grammar of citations, on small Go files.
func TestScanGo(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []doccheck.Citation
	}{
		{
			name: "register IDs in a comment",
			src:  "package p\n// Renew keeps the generation (anomaly A-01 fixed, decision E-3; D-22, INV-7, Q10).\n",
			want: []doccheck.Citation{{Key: "A-01", Line: 2}, {Key: "E-3", Line: 2}, {Key: "D-22", Line: 2}, {Key: "INV-7", Line: 2}, {Key: "Q10", Line: 2}},
		},
		{
			name: "qualified IDs are one citation",
			src:  "package p\n// See 03b E-13 and 06 §12 Q5.\n",
			want: []doccheck.Citation{{Key: "03b E-13", Line: 2}, {Key: "06 §12 Q5", Line: 2}},
		},
		{
			name: "a bare zero-padded E is cited as written",
			src:  "package p\n// 03b E-01, E-02.\n",
			want: []doccheck.Citation{{Key: "03b E-01", Line: 2}, {Key: "E-02", Line: 2}},
		},
		{
			name: "sections carry their document over a list and a line break",
			src:  "package p\n// Validation (02-location-tables §2.1, §2.5,\n// §2.7) and 04 §2.4–§2.8.\n",
			want: []doccheck.Citation{{Key: "02 §2.1", Line: 2}, {Key: "02 §2.5", Line: 2}, {Key: "02 §2.7", Line: 3}, {Key: "04 §2.4", Line: 3}, {Key: "04 §2.8", Line: 3}},
		},
		{
			name: "a document number at the end of a line",
			src:  "package p\n// The Redis provider needs 2–4 calls here, 08\n// §4.6.\n",
			want: []doccheck.Citation{{Key: "08 §4.6", Line: 2}},
		},
		{
			name: "documents named alone, catalogues and chapters",
			src:  "package p\n// Decided in 00-decisions; fixtures of the location catalogue (§3); chapter 21 §5.2; framework spec 21.\n",
			want: []doccheck.Citation{{Key: "00-decisions", Line: 2}, {Key: "catalogue §3", Line: 2}, {Key: "chapter 21 §5.2", Line: 2}, {Key: "chapter 21", Line: 2}},
		},
		{
			name: "a section without its document is a problem",
			src:  "package p\n// As §4.1 says.\n",
			want: []doccheck.Citation{{Key: "§4.1", Line: 2, Problem: `section §4.1 is cited without its document (name the document before it, as in "02 §4.1")`}},
		},
		{
			name: "string literals are read, identifiers are not",
			src:  "package p\nvar A2, S1, Q3 = 1, 2, 3\nvar name = \"AUTH-015 opaque key rejected (Q10)\"\n",
			want: []doccheck.Citation{{Key: "Q10", Line: 3}},
		},
		{
			name: "catalogue scenario IDs are not register IDs",
			src:  "package p\n// LS-135, AUTH-073, AC-E1, AC-D9, LSX-001, CW-002.\n",
			want: nil,
		},
		{
			name: "paragraphs end at a blank line",
			src:  "package p\n// 02 §4.1\n\n// §3.1\n",
			want: []doccheck.Citation{{Key: "02 §4.1", Line: 2}, {Key: "§3.1", Line: 4, Problem: `section §3.1 is cited without its document (name the document before it, as in "02 §3.1")`}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, doccheck.ScanGo([]byte(tc.src)))
		})
	}
}

// Table rows define their first cell's keys; headers, separators and "—"
// define nothing.
func TestParseDefinitions(t *testing.T) {
	md := "# T\n\n| ID | Reference |\n|---|---|\n| A-17, D-01 | locale order |\n| — | none |\n| `07 §2.4` | empty rid |\n\ntext | not a row\n\n| Section | x |\n| :-- | --: |\n| 02 §4.1 | UpdateSpot |\n"
	require.Equal(t, []doccheck.Definition{
		{Key: "A-17", Line: 5}, {Key: "D-01", Line: 5}, {Key: "07 §2.4", Line: 7}, {Key: "02 §4.1", Line: 13},
	}, doccheck.ParseDefinitions([]byte(md)))
	require.True(t, doccheck.IsRegisterID("03b E-13"))
	require.True(t, doccheck.IsRegisterID("06 §12 Q5"))
	require.False(t, doccheck.IsRegisterID("02 §4.1"))
}

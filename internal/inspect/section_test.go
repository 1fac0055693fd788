package inspect

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSections(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []Section
		wantErr string
	}{
		{name: "none means all", in: nil, want: AllSections()},
		{name: "display order and aliases", in: []string{"owners", "Nodes", "fanout", "authority"},
			want: []Section{SectionMeshNodes, SectionFanoutPublishers, SectionOwnerLeases, SectionAuthorities}},
		{name: "duplicates", in: []string{"peers", "peers"}, want: []Section{SectionPeers}},
		{name: "unknown", in: []string{"leases", "nope"}, wantErr: `unknown section "nope" (sections: mesh-nodes, client-servers`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSections(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

package perfdoc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFigure(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.0612, "0.0612"}, {0.24, "0.24"}, {1.2345, "1.23"}, {23.25, "23.2"}, {130.4, "130"},
		{999.4, "999"}, {999.5, "1,000"}, {3371.4, "3,371"}, {1234567, "1,234,567"}, {-4321, "−4,321"},
	} {
		require.Equal(t, tc.want, figure(tc.v), "figure(%v)", tc.v)
	}
}

func TestSpreadAndRatio(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		want   string
	}{
		{nil, "–"},
		{[]float64{1.234}, "1.23 (1 run)"},
		{[]float64{1.3, 1.1}, "1.20 (1.10–1.30)"},
		{[]float64{1.5, 0.9, 1.1}, "1.10 (0.90–1.50)"},
	} {
		require.Equal(t, tc.want, ratioCell(spreadOf(tc.values)), "%v", tc.values)
	}
}

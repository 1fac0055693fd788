package location_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestValidateOwnerID(t *testing.T) {
	vInputs(t, location.ValidateOwnerID, []vInput[string]{
		{"owner-a", "owner-a", vOK()},
		{"LS-006 empty", "", vType(location.CodeLeaseOwnerID)},
		{"LS-006 spaces", "   ", vType(location.CodeLeaseOwnerID)},
		{"LS-010 read with spaces", "  ", vType(location.CodeLeaseOwnerID)},
		{"LS-016 renew with spaces", "  ", vType(location.CodeLeaseOwnerID)},
		{"JavaScript white space only", "\t\u00a0\ufeff\u3000", vType(location.CodeLeaseOwnerID)},
		{"invalid UTF-8", "own\xff", vType(location.CodeLeaseOwnerID)},
		{"padded text", " a ", vOK()},
		{"NUL is allowed", "a\x00", vOK()},
		{"NEL is not trimmed", "\u0085", vOK()},
		{"no length bound", strings.Repeat("o", 4096), vOK()},
	})
}

func TestValidateLeaseTTL(t *testing.T) {
	cases := []struct {
		name   string
		ttl    time.Duration
		wantMs int64
		want   vWant
	}{
		{"30 s", 30 * time.Second, 30000, vOK()},
		{"1 ms", time.Millisecond, 1, vOK()},
		{"sub-millisecond remainder truncated", 1999 * time.Microsecond, 1, vOK()},
		{"largest duration", time.Duration(math.MaxInt64), math.MaxInt64 / int64(time.Millisecond), vOK()},
		{"LS-006 ttl 0", 0, 0, vRange(location.CodeLeaseTTL)},
		{"LS-006 ttl -5 ms", -5 * time.Millisecond, 0, vRange(location.CodeLeaseTTL)},
		{"LS-016 renew ttl 0", 0, 0, vRange(location.CodeLeaseTTL)},
		{"under 1 ms truncates to 0", 999 * time.Microsecond, 0, vRange(location.CodeLeaseTTL)},
		{"smallest negative", math.MinInt64, 0, vRange(location.CodeLeaseTTL)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := location.ValidateLeaseTTL(tc.ttl)
			vCheck(t, err, tc.want)
			require.Equal(t, tc.wantMs, ms)
		})
	}
}

func TestWholeMillis(t *testing.T) {
	cases := []struct {
		ttl    time.Duration
		wantMs int64
		wantOK bool
	}{
		{time.Millisecond, 1, true},
		{1500 * time.Microsecond, 1, true},
		{time.Hour, 3600000, true},
		{time.Microsecond, 0, false},
		{0, 0, false},
		{-1500 * time.Microsecond, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.ttl.String(), func(t *testing.T) {
			ms, ok := location.WholeMillis(tc.ttl)
			require.Equal(t, tc.wantMs, ms)
			require.Equal(t, tc.wantOK, ok)
		})
	}
}

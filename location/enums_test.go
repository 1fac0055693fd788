package location

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnumStrings(t *testing.T) {
	tests := []struct {
		value fmt.Stringer
		want  string
	}{
		{IntentNewClaim, "NewClaim"},
		{IntentTakeover, "Takeover"},
		{WriteIntent(9), "WriteIntent(9)"},
		{AutoConnectRouteMesh, "route-mesh"},
		{AutoConnectInvalid, "AutoConnectType(0)"},
		{PeerRoleSub, "sub"},
		{PeerRole(1), "PeerRole(1)"},
		{StatePreparing, "preparing"},
		{StateServing, "serving"},
		{StateRelocating, "relocating"},
		{StateRelocated, "relocated"},
		{StateDraining, "draining"},
		{StateStopped, "stopped"},
		{StateError, "error"},
		{RuntimeState(7), "RuntimeState(7)"},
		{RouteActorSession, "actor-session"},
		{RouteSpotName, "spot-name"},
		{RouteFrameworkRoute, "framework-route"},
		{RouteInvalid, "RouteKind(0)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			require.Equal(t, tc.want, tc.value.String())
		})
	}
}

package location_test

import (
	"strings"
	"testing"

	"github.com/zlink-systems/zlink-etcd/location"
)

func TestValidateAuthorityKeyText(t *testing.T) {
	vInputs(t, location.ValidateAuthorityKeyText, []vInput[location.AuthorityKey]{
		{"canonical key", "zla1:s:6:nobody", vOK()},
		{"AUTH-014 empty", "", vType(location.CodeAuthorityKeyText)},
		{"AUTH-014 NUL", "a\x00b", vType(location.CodeAuthorityKeyText)},
		{"any other text", "not-a-zla1-key", vOK()},
		{"invalid UTF-8", "\xff", vType(location.CodeAuthorityKeyText)},
	})
}

func TestValidateCanonicalAuthorityKey(t *testing.T) {
	vInputs(t, location.ValidateCanonicalAuthorityKey, []vInput[location.AuthorityKey]{
		{"AUTH-011 KS(nobody)", "zla1:s:6:nobody", vOK()},
		{"AUTH-001 golden actor key", "zla1:a:7:user%3A42", vOK()},
		{"AUTH-001 golden spot key", "zla1:s:7:room%3A%C3%A9", vOK()},
		{"776-byte boundary key", location.AuthorityKey("zla1:a:255:" + strings.Repeat("%00", 255)), vOK()},
		{"AUTH-014 empty", "", vType(location.CodeAuthorityKeyText)},
		{"AUTH-014 NUL", "a\x00b", vType(location.CodeAuthorityKeyText)},
		// Q10 overrides AUTH-015 (reference: missing): only canonical keys.
		{"AUTH-015 opaque key rejected (Q10)", "not-a-zla1-key", vType("codec.authority.shape")},
		{"AUTH-007 non-canonical escape", "zla1:a:1:%41", vType("codec.authority.escape_unreserved")},
		{"AUTH-007 lower-case hex", "zla1:a:1:%c3", vType("codec.authority.escape")},
		{"AUTH-006 leading zero", "zla1:a:01:A", vType("codec.authority.shape")},
		{"AUTH-008 invalid UTF-8", "zla1:a:1:%FF", vType("codec.authority.utf8")},
		{"AUTH-008 length mismatch", "zla1:a:2:a", vType("codec.authority.length_mismatch")},
	})
}

func TestValidateCompareExchange(t *testing.T) {
	const key location.AuthorityKey = "zla1:s:2:g3"
	tok := func(owner string, gen int64) *location.OwnerToken {
		return &location.OwnerToken{OwnerID: owner, LeaseGeneration: gen}
	}
	fence := func(f string) *location.RelocationFence { r := location.RelocationFence(f); return &r }
	preserve := func(payload []byte) location.AuthorityMutation {
		return location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve, Payload: payload}
	}
	big := make([]byte, location.MaxPayloadBytes+1)
	cases := []struct {
		name string
		key  location.AuthorityKey
		m    location.AuthorityMutation
		want vWant
	}{
		{"AUTH-018 preserve", key, preserve([]byte("p")), vOK()},
		{"AUTH-021 restore", key, location.AuthorityMutation{Kind: location.MutationRestore, Payload: []byte("r"), ExpectedOwner: tok("owner-a", 1)}, vOK()},
		{"AUTH-035 rebind", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease, Payload: []byte("r"),
			ExpectedOwner: tok("owner-a", 1), TargetOwner: tok("owner-a", 3)}, vOK()},
		{"rebind to a smaller lease generation", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease,
			ExpectedOwner: tok("owner-a", 3), TargetOwner: tok("owner-a", 1)}, vOK()},
		{"AUTH-048 newOwner", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner,
			Payload: []byte("n"), TargetOwner: tok("owner-b", 2), RelocationFence: fence("R1")}, vOK()},
		{"AUTH-030 delete", key, location.AuthorityMutation{Kind: location.MutationDelete}, vOK()},

		{"AUTH-025 preserve with target owner", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve,
			TargetOwner: tok("owner-b", 2)}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-025 preserve with fence", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve,
			RelocationFence: fence("f")}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-025 newOwner without fence", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner,
			TargetOwner: tok("owner-b", 2)}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-025 newOwner without target owner", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner,
			RelocationFence: fence("f")}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-025 on a missing key too", "zla1:s:5:ghost", location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve,
			RelocationFence: fence("f")}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-026 rebind owner ids differ", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease,
			ExpectedOwner: tok("owner-a", 1), TargetOwner: tok("owner-b", 2)}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-026 rebind equal lease generations", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease,
			ExpectedOwner: tok("owner-a", 1), TargetOwner: tok("owner-a", 1)}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-026 rebind expected lease generation 0", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease,
			ExpectedOwner: tok("owner-a", 0), TargetOwner: tok("owner-a", 2)}, vType(location.CodeAuthorityMutationShape)},
		{"AUTH-026 rebind target lease generation 0", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease,
			ExpectedOwner: tok("owner-a", 1), TargetOwner: tok("owner-a", 0)}, vType(location.CodeAuthorityMutationShape)},
		{"rebind without tokens", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease}, vType(location.CodeAuthorityMutationShape)},
		{"restore without expected owner", key, location.AuthorityMutation{Kind: location.MutationRestore}, vType(location.CodeAuthorityMutationShape)},
		{"restore's expected owner is not validated", key, location.AuthorityMutation{Kind: location.MutationRestore, ExpectedOwner: tok("", -1)}, vOK()},
		{"unknown mutation kind", key, location.AuthorityMutation{Kind: "replace"}, vType(location.CodeAuthorityMutationShape)},
		{"put without a transition", key, location.AuthorityMutation{Kind: location.MutationPut}, vType(location.CodeAuthorityMutationShape)},

		{"AUTH-027 payload of 0 bytes", key, preserve(nil), vOK()},
		{"AUTH-027 payload of exactly 1 MiB", key, preserve(make([]byte, location.MaxPayloadBytes)), vOK()},
		{"AUTH-027 payload of 1 MiB + 1", key, preserve(big), vRange(location.CodeAuthorityPayload)},
		{"AUTH-028 ALT restore payload too large (D-02)", key, location.AuthorityMutation{Kind: location.MutationRestore, Payload: big,
			ExpectedOwner: tok("owner-a", 1)}, vRange(location.CodeAuthorityPayload)},
		{"AUTH-028 ALT rebind payload too large (D-02)", key, location.AuthorityMutation{Kind: location.MutationRebindOwnerLease, Payload: big,
			ExpectedOwner: tok("owner-a", 1), TargetOwner: tok("owner-a", 2)}, vRange(location.CodeAuthorityPayload)},
		{"delete ignores its payload", key, location.AuthorityMutation{Kind: location.MutationDelete, Payload: big}, vOK()},

		{"AUTH-029 key empty", "", preserve(nil), vType(location.CodeAuthorityKeyText)},
		{"AUTH-029 key with NUL", "zla1:s:2:g\x00", preserve(nil), vType(location.CodeAuthorityKeyText)},
		{"Q10 non-canonical key", "g3", preserve(nil), vType("codec.authority.shape")},
		{"key before shape", "", location.AuthorityMutation{Kind: "bogus"}, vType(location.CodeAuthorityKeyText)},
		{"shape before payload", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionPreserve,
			Payload: big, RelocationFence: fence("f")}, vType(location.CodeAuthorityMutationShape)},
		{"target owner invalid UTF-8", key, location.AuthorityMutation{Kind: location.MutationPut, Transition: location.TransitionNewOwner,
			TargetOwner: tok("\xff", 2), RelocationFence: fence("f")}, vType(location.CodeTextUTF8)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { vCheck(t, location.ValidateCompareExchange(tc.key, tc.m), tc.want) })
	}
}

// vListArgs are the arguments of ValidateListAuthorities.
type vListArgs struct {
	prefix, cursor string
	limit          int
}

func TestValidateListAuthorities(t *testing.T) {
	validate := func(a vListArgs) error { return location.ValidateListAuthorities(a.prefix, a.cursor, a.limit) }
	vInputs(t, validate, []vInput[vListArgs]{
		{"AUTH-063 first page", vListArgs{"zla1:", "", 10}, vOK()},
		{"AUTH-062 limit 0", vListArgs{"zla1:", "", 0}, vRange(location.CodeAuthorityScanLimit)},
		{"AUTH-062 limit -1", vListArgs{"zla1:", "", -1}, vRange(location.CodeAuthorityScanLimit)},
		{"AUTH-062 limit 1001", vListArgs{"zla1:", "", 1001}, vRange(location.CodeAuthorityScanLimit)},
		{"AUTH-062 limit 1", vListArgs{"zla1:", "", 1}, vOK()},
		{"AUTH-062 limit 1000", vListArgs{"zla1:", "", 1000}, vOK()},
		{"AUTH-065 empty prefix", vListArgs{"", "", 10}, vOK()},
		{"Q10 prefix of 1,024 bytes", vListArgs{strings.Repeat("p", 1024), "", 10}, vOK()},
		{"Q10 prefix of 1,025 bytes", vListArgs{strings.Repeat("p", 1025), "", 10}, vRange(location.CodeAuthorityScanPrefix)},
		{"Q10 prefix is any text", vListArgs{"\x00\xff", "", 10}, vOK()},
		{"AUTH-073 undecodable cursor is not an error (E-10)", vListArgs{"zla1:", "garbage", 10}, vOK()},
		{"AUTH-073 cursor of 4,096 bytes", vListArgs{"zla1:", strings.Repeat("c", 4096), 10}, vOK()},
		{"AUTH-073 cursor of 4,097 bytes", vListArgs{"zla1:", strings.Repeat("c", 4097), 10}, vRange(location.CodeAuthorityScanCursor)},
		{"prefix before cursor", vListArgs{strings.Repeat("p", 1025), strings.Repeat("c", 4097), 0}, vRange(location.CodeAuthorityScanPrefix)},
		{"cursor before limit", vListArgs{"", strings.Repeat("c", 4097), 0}, vRange(location.CodeAuthorityScanCursor)},
	})
}

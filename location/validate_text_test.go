package location_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zlink-systems/zlink-etcd/location"
)

// vWant is the expected outcome of one validation: accepted (zero value) or
// an InputError of a class and code.
type vWant struct {
	class location.ErrorClass
	code  string
}

// vOK expects the input to be accepted.
func vOK() vWant { return vWant{} }

// vType expects a Type error with code.
func vType(code string) vWant { return vWant{class: location.ClassType, code: code} }

// vRange expects a Range error with code.
func vRange(code string) vWant { return vWant{class: location.ClassRange, code: code} }

// vCheck asserts that err is the expected outcome.
func vCheck(t *testing.T, err error, want vWant) {
	t.Helper()
	if want.code == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	require.ErrorIs(t, err, location.ErrInvalidArgument)
	ie, ok := location.AsInputError(err)
	require.True(t, ok, "error %v is not an *InputError", err)
	require.Equal(t, want.code, ie.Code, "message: %s", ie.Message)
	require.Equal(t, want.class, ie.Class, "message: %s", ie.Message)
	require.NotEmpty(t, ie.Message)
}

// vInput is a validation case of one input.
type vInput[T any] struct {
	name string
	in   T
	want vWant
}

// vInputs checks validate's verdict on each case's input.
func vInputs[T any](t *testing.T, validate func(T) error, cases []vInput[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { vCheck(t, validate(tc.in), tc.want) })
	}
}

// vCase is a validation case: mutate changes (or keeps) a valid value.
type vCase[T any] struct {
	name   string
	mutate func(*T)
	want   vWant
}

// vMutations checks validate's verdict on valid() changed by each case.
func vMutations[T any](t *testing.T, valid func() T, validate func(T) error, cases []vCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := valid()
			tc.mutate(&v)
			vCheck(t, validate(v), tc.want)
		})
	}
}

// vWriteCase is a validation case of a write, whose intent is validated too.
type vWriteCase[T any] struct {
	name   string
	mutate func(*T)
	intent location.WriteIntent
	want   vWant
}

// vWriteMutations is vMutations for a write validator and each case's intent.
func vWriteMutations[T any](t *testing.T, valid func() T, validate func(T, location.WriteIntent) error, cases []vWriteCase[T]) {
	t.Helper()
	for _, tc := range cases {
		vMutations(t, valid, func(v T) error { return validate(v, tc.intent) }, []vCase[T]{{tc.name, tc.mutate, tc.want}})
	}
}

// vText is a case of a text predicate.
type vText struct {
	name, in string
	want     bool
}

// vPredicate checks pred's answer on each case's text.
func vPredicate(t *testing.T, pred func(string) bool, cases []vText) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, pred(tc.in)) })
	}
}

func TestIsDText(t *testing.T) {
	vPredicate(t, location.IsDText, []vText{
		{"one byte", "a", true},
		{"255 bytes", strings.Repeat("x", 255), true},
		{"255 bytes multibyte", strings.Repeat("€", 85), true},
		{"whitespace only is fine", "   ", true},
		{"empty", "", false},
		{"256 bytes", strings.Repeat("x", 256), false},
		{"NUL", "a\x00b", false},
		{"invalid UTF-8", "a\xffb", false},
	})
}

func TestIsTrimText(t *testing.T) {
	vPredicate(t, location.IsTrimText, []vText{
		{"plain", "owner-a", true},
		{"padded", "  owner-a  ", true},
		{"NUL is text", "\x00", true},
		{"NEL is not JavaScript white space", "\u0085", true},
		{"long", strings.Repeat("o", 10000), true},
		{"empty", "", false},
		{"spaces", "   ", false},
		{"tabs and newlines", "\t\r\n\v\f", false},
		{"no-break space and BOM", "\u00a0\ufeff", false},
		{"Unicode space separators", "\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000", false},
		{"invalid UTF-8", "\xff", false},
	})
}

func TestIsSpotIDBytes(t *testing.T) {
	vPredicate(t, location.IsSpotIDBytes, []vText{
		{"one byte", "s", true},
		{"255 bytes", strings.Repeat("s", 255), true},
		{"255 bytes multibyte", strings.Repeat("€", 85), true},
		{"NUL allowed", "a\x00b", true},
		{"empty", "", false},
		{"256 bytes", strings.Repeat("s", 256), false},
		{"invalid UTF-8", "\xc3", false},
	})
}

func TestIsUUIDLower(t *testing.T) {
	vPredicate(t, location.IsUUIDLower, []vText{
		{"canonical", "01234567-89ab-cdef-0123-456789abcdef", true},
		{"nil UUID (no version check)", "00000000-0000-0000-0000-000000000000", true},
		{"upper case", "01234567-89AB-CDEF-0123-456789ABCDEF", false},
		{"not a uuid", "not-a-uuid", false},
		{"braces", "{01234567-89ab-cdef-0123-456789abcdef}", false},
		{"no dashes", "0123456789abcdef0123456789abcdef", false},
		{"dash misplaced", "0123456-789ab-cdef-0123-456789abcdef", false},
		{"non-hex letter", "01234567-89ab-cdef-0123-456789abcdeg", false},
		{"trailing newline", "01234567-89ab-cdef-0123-456789abcdef\n", false},
		{"empty", "", false},
	})
}

func TestIsPlainText(t *testing.T) {
	vPredicate(t, location.IsPlainText, []vText{
		{"text", "room", true},
		{"space", " ", true},
		{"long", strings.Repeat("r", 100000), true},
		{"empty", "", false},
		{"NUL", "a\x00b", false},
		{"invalid UTF-8", "\xff", false},
	})
}

func TestValidationMessagesQuoteShortValuesAndSizeLongOnes(t *testing.T) {
	d := vMN()
	d.MeshName = strings.Repeat("m", 300)
	ie, ok := location.AsInputError(location.ValidateMeshNode(d, location.IntentNewClaim))
	require.True(t, ok)
	require.Contains(t, ie.Message, "meshName")
	require.Contains(t, ie.Message, "(300 bytes)")
	require.Contains(t, ie.Message, "300 bytes long (at most 255)")
	require.Less(t, len(ie.Message), 250)

	d = vMN()
	d.OwnerID = "a\x00b"
	ie, ok = location.AsInputError(location.ValidateMeshNode(d, location.IntentNewClaim))
	require.True(t, ok)
	require.Contains(t, ie.Message, `ownerId "a\x00b" contains NUL`)
}

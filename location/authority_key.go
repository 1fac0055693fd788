package location

import (
	"errors"

	"github.com/zlink-systems/zlink-etcd/keys"
)

// CodeAuthorityObjectKind: an object kind that has no authority namespace
// (Type). EncodeAuthorityKey also returns CodeAuthorityIdentityLength (Range)
// and CodeAuthorityIdentityText (Type, for invalid UTF-8); DecodeAuthorityKey
// returns "codec." followed by the code of package keys (for example
// "codec.authority.escape"), always of class Type.
const CodeAuthorityObjectKind = "authority.object_kind"

// EncodeAuthorityKey returns the canonical "zla1:" key of an object's
// authority record. Actors use the 'a' namespace; user and instance spots
// share the 's' namespace, so a user spot and an instance spot with the same
// global id have the same key. The global id must be valid UTF-8 of 1..255
// bytes. Errors are *InputError: an unknown kind or invalid UTF-8 is a type
// error, a bad length a range error.
func EncodeAuthorityKey(kind ObjectKind, globalID string) (AuthorityKey, error) {
	var k keys.AuthorityKind
	switch kind {
	case ObjectActor:
		k = keys.AuthorityActor
	case ObjectUserSpot, ObjectInstanceSpot:
		k = keys.AuthoritySpot
	default:
		return "", NewTypeError(CodeAuthorityObjectKind, "object kind %q has no authority key", kind)
	}
	s, err := keys.EncodeAuthorityKey(k, globalID)
	if err != nil {
		var ce *keys.CodecError
		if errors.As(err, &ce) && ce.Problem == keys.ProblemLength {
			return "", NewRangeError(CodeAuthorityIdentityLength, "%s", ce.Message)
		}
		return "", NewTypeError(CodeAuthorityIdentityText, "%s", codecMessage(err))
	}
	return AuthorityKey(s), nil
}

// DecodeAuthorityKey parses a canonical authority key strictly (see
// keys.DecodeAuthorityKey) and returns the object kind and global id. The 's'
// namespace decodes to ObjectUserSpot: the spot kind is not recorded in the
// key. Every rejection is an *InputError of class type with code
// "codec.<code of package keys>".
func DecodeAuthorityKey(k AuthorityKey) (ObjectKind, string, error) {
	kind, id, err := keys.DecodeAuthorityKey(string(k))
	if err != nil {
		code := "codec.malformed"
		var ce *keys.CodecError
		if errors.As(err, &ce) {
			code = "codec." + ce.Code
		}
		return "", "", NewTypeError(code, "%s", codecMessage(err))
	}
	if kind == keys.AuthorityActor {
		return ObjectActor, id, nil
	}
	return ObjectUserSpot, id, nil
}

// codecMessage returns the words of a codec error without its code.
func codecMessage(err error) string {
	var ce *keys.CodecError
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

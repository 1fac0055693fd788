package location

import "fmt"

// Validation of the authority record methods (04-authority §2.1–§2.3) and the
// codes shared by every authority-side validator (04 §0.5).

// Codes of authority validation errors.
const (
	// CodeAuthorityKeyText: an authority key is empty or holds NUL (Type).
	CodeAuthorityKeyText = "authority.key_text"
	// CodeAuthorityMutationShape: a compare-exchange mutation has the wrong
	// combination of fields (Type).
	CodeAuthorityMutationShape = "authority.mutation_shape"
	// CodeAuthorityPayload: a payload is larger than 1 MiB (Range).
	CodeAuthorityPayload = "authority.payload"
	// CodeAuthorityIdentityText: a global id is not plain text (Type).
	CodeAuthorityIdentityText = "authority.identity_text"
	// CodeAuthorityIdentityLength: a global id is not 1..255 bytes (Range).
	CodeAuthorityIdentityLength = "authority.identity_length"
	// CodeAuthorityIntentText: a creation's stable type or content reference
	// is not plain text (Type).
	CodeAuthorityIntentText = "authority.intent_text"
	// CodeAuthorityReceipt: the request digest is not 32 bytes or the encoded
	// size is outside 0..1 MiB (Type).
	CodeAuthorityReceipt = "authority.receipt"
	// CodeAuthorityCapacity: an invalid capacity vector (Range).
	CodeAuthorityCapacity = "authority.capacity"
	// CodeAuthorityKindPath: the creation path does not fit the object kind
	// (Type).
	CodeAuthorityKindPath = "authority.kind_path"
	// CodeAuthorityScanLimit: a scan limit outside 1..1000 (Range).
	CodeAuthorityScanLimit = "authority.scan_limit"
	// CodeAuthorityScanCursor: a scan cursor longer than 4096 bytes (Range).
	// A cursor the store cannot use is not an error: it answers scanExpired
	// (00-decisions E-10).
	CodeAuthorityScanCursor = "authority.scan_cursor"
	// CodeAuthorityScanPrefix: a scan prefix longer than 1,024 bytes (Range;
	// 00-decisions Q10).
	CodeAuthorityScanPrefix = "authority.scan_prefix"
)

// Scan bounds.
const (
	// MaxScanLimit is the largest page of ListAuthorities (pages are 1..1000).
	MaxScanLimit = 1000
	// MaxScanPrefixBytes bounds a ListAuthorities prefix (00-decisions Q10).
	MaxScanPrefixBytes = 1024
	// MaxScanCursorBytes bounds a ListAuthorities cursor.
	MaxScanCursorBytes = 4096
)

// ValidateAuthorityKeyText checks that an authority key is plain text: not
// empty, no NUL, valid UTF-8 (04 §2.1).
func ValidateAuthorityKeyText(k AuthorityKey) error {
	if p := plainTextProblem(string(k)); p != "" {
		return NewTypeError(CodeAuthorityKeyText, "authority key %s %s", quote(string(k)), p)
	}
	return nil
}

// ValidateCanonicalAuthorityKey checks an authority key given to
// ReadAuthority or CompareExchangeAuthority: plain text, then a canonical
// "zla1:" key (00-decisions Q10). A key that does not decode is an
// InputError of class Type with a "codec." code from DecodeAuthorityKey.
func ValidateCanonicalAuthorityKey(k AuthorityKey) error {
	if err := ValidateAuthorityKeyText(k); err != nil {
		return err
	}
	if _, _, err := DecodeAuthorityKey(k); err != nil {
		if ie, ok := AsInputError(err); ok {
			return &InputError{Class: ie.Class, Code: ie.Code, Message: fmt.Sprintf("authority key %s is not canonical: %s", quote(string(k)), ie.Message)}
		}
		return err
	}
	return nil
}

// ValidateCompareExchange checks a CompareExchangeAuthority call before any
// state is read (D-02): the key is canonical; the mutation has a valid shape;
// every mutation but delete carries a payload of at most 1 MiB. The expected
// version needs no validation: it is compared as an exact string.
//
// Shapes (authority.mutation_shape otherwise):
//   - put/preserve: no TargetOwner, no RelocationFence;
//   - put/newOwner: both TargetOwner and RelocationFence;
//   - rebindOwnerLease: ExpectedOwner and TargetOwner with the same owner id,
//     different lease generations, both positive;
//   - restore: ExpectedOwner (its values are not validated);
//   - delete: anything.
func ValidateCompareExchange(key AuthorityKey, m AuthorityMutation) error {
	if err := ValidateCanonicalAuthorityKey(key); err != nil {
		return err
	}
	if err := validateMutationShape(&m); err != nil {
		return err
	}
	if m.Kind != MutationDelete && len(m.Payload) > MaxPayloadBytes {
		return requireMaxBytes(CodeAuthorityPayload, fmt.Sprintf("%s payload", m.Kind), m.Payload, MaxPayloadBytes)
	}
	if m.TargetOwner != nil {
		return requireUTF8(textField{"mutation targetOwner.ownerId", m.TargetOwner.OwnerID})
	}
	return nil
}

// validateMutationShape checks the field combination of a mutation.
func validateMutationShape(m *AuthorityMutation) error {
	switch m.Kind {
	case MutationDelete:
		return nil
	case MutationRestore:
		if m.ExpectedOwner == nil {
			return NewTypeError(CodeAuthorityMutationShape, "restore needs the expected owner token")
		}
		return nil
	case MutationRebindOwnerLease:
		e, t := m.ExpectedOwner, m.TargetOwner
		switch {
		case e == nil || t == nil:
			return NewTypeError(CodeAuthorityMutationShape, "rebindOwnerLease needs both the expected and the target owner token")
		case e.OwnerID != t.OwnerID:
			return NewTypeError(CodeAuthorityMutationShape, "rebindOwnerLease must keep the owner: expected owner %s, target owner %s",
				quote(e.OwnerID), quote(t.OwnerID))
		case e.LeaseGeneration == t.LeaseGeneration:
			return NewTypeError(CodeAuthorityMutationShape, "rebindOwnerLease must change the lease generation; both are %d", e.LeaseGeneration)
		case e.LeaseGeneration <= 0 || t.LeaseGeneration <= 0:
			return NewTypeError(CodeAuthorityMutationShape, "rebindOwnerLease lease generations must be positive (expected %d, target %d)",
				e.LeaseGeneration, t.LeaseGeneration)
		}
		return nil
	case MutationPut:
		hasOwner, hasFence := m.TargetOwner != nil, m.RelocationFence != nil
		switch m.Transition {
		case TransitionPreserve:
			if hasOwner || hasFence {
				return NewTypeError(CodeAuthorityMutationShape, "put/preserve must carry neither a target owner nor a relocation fence (target owner %t, fence %t)",
					hasOwner, hasFence)
			}
		case TransitionNewOwner:
			if !hasOwner || !hasFence {
				return NewTypeError(CodeAuthorityMutationShape, "put/newOwner needs both a target owner and a relocation fence (target owner %t, fence %t)",
					hasOwner, hasFence)
			}
		default:
			return NewTypeError(CodeAuthorityMutationShape, "put transition %s is neither %q nor %q",
				quote(string(m.Transition)), TransitionPreserve, TransitionNewOwner)
		}
		return nil
	default:
		return NewTypeError(CodeAuthorityMutationShape, "mutation kind %s is none of %q, %q, %q, %q",
			quote(string(m.Kind)), MutationPut, MutationRebindOwnerLease, MutationRestore, MutationDelete)
	}
}

// ValidateListAuthorities checks a ListAuthorities call: the prefix is any
// text of at most 1,024 bytes (00-decisions Q10), the cursor is at most 4,096
// bytes ("" starts a scan), and the limit is 1..1000. A cursor the store
// cannot decode or use is not an error: the store answers scanExpired
// (00-decisions E-10).
func ValidateListAuthorities(prefix, cursor string, limit int) error {
	if len(prefix) > MaxScanPrefixBytes {
		return NewRangeError(CodeAuthorityScanPrefix, "scan prefix %s is %d bytes long (at most %d)", quote(prefix), len(prefix), MaxScanPrefixBytes)
	}
	if len(cursor) > MaxScanCursorBytes {
		return NewRangeError(CodeAuthorityScanCursor, "scan cursor is %d bytes long (at most %d)", len(cursor), MaxScanCursorBytes)
	}
	if limit < 1 || limit > MaxScanLimit {
		return NewRangeError(CodeAuthorityScanLimit, "scan limit %d is outside 1..%d", limit, MaxScanLimit)
	}
	return nil
}

package location

// Validation of ReserveRelocationCapacity (04-authority §2.9). Neither the
// authority key, the owners nor the generations are validated by the
// reference: a request that does not match the record simply conflicts.
// AbortRelocationCapacity takes no input that could be invalid.

// CodeRelocationText: the reservation id or stable type is not plain text
// (Type).
const CodeRelocationText = "relocation.text"

// ValidateRelocationReservation checks a relocation capacity reservation in
// the reference's order: reservationId and stableType are plain text, the
// capacity vector is valid; then, Go-only, the other text fields are valid
// UTF-8.
func ValidateRelocationReservation(r RelocationReservationRequest) error {
	for _, f := range []textField{{"reservationId", r.ReservationID}, {"stableType", r.StableType}} {
		if p := plainTextProblem(f.value); p != "" {
			return NewTypeError(CodeRelocationText, "relocation %s %s %s", f.name, quote(f.value), p)
		}
	}
	if err := ValidateCapacityVector(r.Capacity); err != nil {
		return err
	}
	fields := []textField{
		{"relocation authorityKey", string(r.AuthorityKey)},
		{"relocation expectedStoreVersion", string(r.ExpectedStoreVersion)},
		{"relocation objectKind", string(r.ObjectKind)},
		{"relocation sourceDescriptor.meshName", r.SourceDescriptor.MeshName},
		{"relocation sourceOwner.ownerId", r.SourceOwner.OwnerID},
		{"relocation targetDescriptor.meshName", r.TargetDescriptor.MeshName},
		{"relocation targetOwner.ownerId", r.TargetOwner.OwnerID},
	}
	fields = append(fields, capacityTextFields("relocation capacity", r.Capacity)...)
	return requireUTF8(fields...)
}

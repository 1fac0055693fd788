package txn

import (
	"crypto/rand"
	"encoding/hex"
)

// NonceLength is the length of a write nonce's text: 32 lower-case hex
// digits (128 random bits).
const NonceLength = 32

// NewNonce returns a fresh random write nonce. Every value a transaction
// writes carries its nonce, so that a re-read can tell whether a
// transaction whose result was lost was applied (decision E-9).
func NewNonce() string {
	var b [NonceLength / 2]byte
	// crypto/rand.Read never fails on supported platforms (Go 1.24+).
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

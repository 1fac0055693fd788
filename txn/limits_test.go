package txn

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The limit error tells the transaction's shape.
func TestTooLargeError(t *testing.T) {
	l := Limits{MaxTxnOps: 4}
	err := l.Check("op", TxnShape{Compares: 2, Then: 6, Else: 2, Bytes: 10})
	var tl *TooLargeError
	require.ErrorAs(t, err, &tl)
	require.Equal(t, 6, tl.Shape.Then)
	require.EqualError(t, err, "op: operation too large for one transaction: 6 operations in one transaction, the limit is 4 (compares 2, writes 6, reads 2)")
	require.NoError(t, l.Check("op", TxnShape{Compares: 4, Then: 4, Else: 4}))
}

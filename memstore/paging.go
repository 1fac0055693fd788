package memstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode"

	"github.com/zlink-systems/zlink-etcd/location"
	"github.com/zlink-systems/zlink-etcd/rules"
	"github.com/zlink-systems/zlink-etcd/storecore"
)

// Paging of the location lists (02 §1.5): rows are sorted by their canonical
// table key in byte order (anomaly A-17 fixed) and sliced by an offset that
// the continuation token carries as decimal text, as the reference does.

// List implements storecore.Backend: the rows of the table that the query
// keeps, sorted by key, one page of them, each copied out (or projected)
// under the store lock.
func (b backend) List(_ context.Context, q *storecore.ListQuery) (storecore.ListPage, error) {
	spec, ok := rules.Lookup(q.Table)
	if !ok {
		return storecore.ListPage{}, fmt.Errorf("%w: unknown table %q", location.ErrInternal, q.Table)
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := rules.NewTx(s.newSource())
	var rows []keyedRow
	for key, rec := range s.tables[q.Table] {
		if q.Match != nil && !q.Match(rec.Value) {
			continue
		}
		if q.LiveOwner != nil {
			if _, live := tx.Source().LiveLease(q.LiveOwner(rec.Value)); !live {
				continue
			}
		}
		rows = append(rows, keyedRow{key: key, row: rec.Value})
	}
	copyOut := spec.Clone
	if q.Project != nil {
		copyOut = func(row any) any { return q.Project(tx, row) }
	}
	return pageOf(rows, q.Page, copyOut), nil
}

// keyedRow is one list candidate with its canonical table key.
type keyedRow struct {
	key string
	row any
}

// pageOf sorts rows by key and returns the page p asks for, every item made
// by copyOut:
//   - offset: 0 without a token, else the token parsed as the reference's
//     parseInt (parseOffset);
//   - size: p.PageSize when positive, else unlimited;
//   - the token of the next page is the decimal offset after this page when
//     rows remain beyond it, else "".
func pageOf(rows []keyedRow, p location.PageRequest, copyOut func(any) any) storecore.ListPage {
	slices.SortFunc(rows, func(a, b keyedRow) int { return cmp.Compare(a.key, b.key) })
	offset := min(parseOffset(p.ContinuationToken), len(rows))
	end := len(rows)
	if p.PageSize > 0 && p.PageSize < end-offset {
		end = offset + p.PageSize
	}
	items := make([]any, 0, end-offset)
	for _, r := range rows[offset:end] {
		items = append(items, copyOut(r.row))
	}
	page := storecore.ListPage{Rows: items}
	if end < len(rows) {
		page.Token = strconv.Itoa(end)
	}
	return page
}

// parseOffset reads a continuation token as JavaScript's parseInt(token, 10)
// and keeps the result when it is a non-negative number: leading JavaScript
// white space is skipped, one sign is allowed, then the leading decimal
// digits count and anything after them is ignored. No digits, or a negative
// value, give 0 ("abc" → 0, "-1" → 0, "2x" → 2, " 3" → 3, "+1" → 1,
// "1e3" → 1). A value too large for an int saturates (it lies past the end
// of any list, as in the reference).
func parseOffset(token string) int {
	rs := []rune(token)
	i := 0
	for i < len(rs) && isJSWhiteSpace(rs[i]) {
		i++
	}
	negative := false
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-') {
		negative = rs[i] == '-'
		i++
	}
	n, digits := 0, 0
	for ; i < len(rs) && rs[i] >= '0' && rs[i] <= '9'; i++ {
		digits++
		d := int(rs[i] - '0')
		if n > (math.MaxInt-d)/10 {
			n = math.MaxInt
			continue
		}
		n = n*10 + d
	}
	if digits == 0 || negative {
		return 0 // NaN, or negative (-0 included) → restart at 0
	}
	return n
}

// isJSWhiteSpace reports whether r is white space or a line terminator to
// JavaScript's string-to-number parsing: TAB, LF, VT, FF, CR, SPACE, NBSP,
// BOM, LS, PS and every other Unicode space separator (Zs).
func isJSWhiteSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00a0, 0xfeff, 0x2028, 0x2029:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

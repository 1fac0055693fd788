package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zlink-systems/zlink-etcd/location"
)

// WriteJSON writes the snapshot's sections as one indented JSON object.
func WriteJSON(w io.Writer, s *Snapshot) error {
	out := map[string]any{"prefix": s.Prefix, "revision": s.Revision, "readAt": s.ReadAt}
	if s.Serializable {
		out["serializable"] = true
	}
	for _, spec := range sectionSpecs() {
		if s.Has(spec.name) {
			out[spec.json] = spec.value(s)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("inspect: write json: %w", err)
	}
	return nil
}

// nonNil makes a nil slice encode as [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteTables writes one titled table per section of the snapshot.
func WriteTables(w io.Writer, s *Snapshot) error {
	tw := &tableWriter{w: w}
	tw.linef("prefix %s at revision %d (%s)", s.Prefix, s.Revision, s.ReadAt.Format(time.RFC3339))
	if s.Serializable {
		tw.linef("serializable read: one member's copy, possibly stale; the time leases have left is not asked")
	}
	for _, sec := range s.Sections {
		if spec, ok := specOf(sec); ok {
			spec.render(tw, s)
		}
	}
	return tw.err
}

// tableWriter writes titled tables and keeps the first error.
type tableWriter struct {
	w   io.Writer
	err error
}

// linef writes one line.
func (t *tableWriter) linef(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format+"\n", args...)
	}
}

// table writes a blank line, the title with the row count, and the rows
// under the header (or "(none)").
func (t *tableWriter) table(title string, header []string, rows [][]string) {
	t.linef("")
	t.linef("%s (%d)", title, len(rows))
	if len(rows) == 0 {
		t.linef("  (none)")
		return
	}
	tw := tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
	write := func(cells []string) {
		if t.err == nil {
			_, t.err = fmt.Fprintln(tw, "  "+strings.Join(cells, "\t"))
		}
	}
	write(header)
	for _, r := range rows {
		write(r)
	}
	if err := tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
}

// writeRows writes one titled table of rows, each rendered by cells.
func writeRows[T any](t *tableWriter, title string, header []string, rows []T, cells func(T) []string) {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, cells(r))
	}
	t.table(title, header, out)
}

// yesNo renders a liveness flag.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// itoa renders an integer.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// usage renders a population capacity as active/reserved/limit.
func usage(c location.PopulationCapacity) string {
	return fmt.Sprintf("%d/%d/%d", c.Active, c.Reserved, c.Limit)
}

// ridText renders an optional routing id.
func ridText(r *location.RoutingID) string {
	if r == nil {
		return "-"
	}
	return r.String()
}

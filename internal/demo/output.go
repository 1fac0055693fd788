package demo

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// printer writes the demo's progress; the loops' event sinks write through
// it from their own goroutines.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// newPrinter returns a printer whose event times count from now.
func newPrinter(w io.Writer) *printer { return &printer{w: w, start: time.Now()} }

// linef writes one line as is.
func (p *printer) linef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// eventf writes one progress line stamped with the time since the start.
func (p *printer) eventf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "  %6.2fs  %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// table writes a header and rows, indented, aligned in columns.
func (p *printer) table(header []string, rows [][]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "    "+strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, "    "+strings.Join(r, "\t"))
	}
	_ = tw.Flush()
}

// seconds renders a duration in seconds with two decimals.
func seconds(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()) }

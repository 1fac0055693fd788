package perfdoc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoMarkers is returned by Update for a document that lacks a
// section's markers (or has them out of order).
var ErrNoMarkers = errors.New("perfdoc: the document lacks a generated section's markers")

// BeginMarker is the line that opens section id's generated text.
func BeginMarker(id string) string {
	return "<!-- BEGIN GENERATED perf:" + id + " by internal/perfdoc from docs/perf/raw: make perf -->"
}

// EndMarker is the line that closes section id's generated text.
func EndMarker(id string) string { return "<!-- END GENERATED perf:" + id + " -->" }

// Update returns doc with the generated text of every section that raw
// has outputs for replaced by its rendering; a section without outputs
// keeps its text (nothing was measured to replace it). Every section's
// markers must be in doc, measured or not.
func Update(doc string, raw Raw) (string, error) {
	for _, s := range Sections() {
		begin, end := BeginMarker(s.ID), EndMarker(s.ID)
		i := strings.Index(doc, begin)
		j := strings.Index(doc, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("%w: perf:%s (want the lines %s and %s)", ErrNoMarkers, s.ID, begin, end)
		}
		if _, measured := s.outputs(raw); !measured {
			continue
		}
		doc = doc[:i+len(begin)] + "\n\n" + s.Render(raw) + "\n" + doc[j:]
	}
	return doc, nil
}

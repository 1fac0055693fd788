package doccheck

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// Definition is a key defined by a docs/ table row: the row's first cell,
// which may list several keys separated by commas ("A-17, D-01").
type Definition struct {
	Key  string
	Line int
}

var separatorRow = regexp.MustCompile(`^\|[\s:|-]*$`)

// ParseDefinitions returns the keys defined by the markdown tables of one
// document: the first cell of every body row (header and separator rows
// excluded), split at commas, backticks removed. A cell of "—" defines
// nothing.
func ParseDefinitions(md []byte) []Definition {
	var out []Definition
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	inTable := false
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "|") {
			inTable = false
			continue
		}
		if !inTable {
			inTable = true // the header row
			continue
		}
		if separatorRow.MatchString(text) {
			continue
		}
		cells := strings.SplitN(strings.TrimPrefix(text, "|"), "|", 2)
		for _, key := range strings.Split(cells[0], ",") {
			key = strings.TrimSpace(strings.ReplaceAll(key, "`", ""))
			if key == "" || key == "—" || key == "-" {
				continue
			}
			out = append(out, Definition{Key: key, Line: line})
		}
	}
	return out
}

// IsRegisterID reports whether key is a register ID (as opposed to a
// section or a document name): those must be defined exactly once.
func IsRegisterID(key string) bool {
	return registerID.MatchString(key)
}

var registerID = regexp.MustCompile(`^(?:(?:A|D|S)-[0-9]+|E-[0-9]+|INV-[0-9]+|Q[0-9]+|03b E-[0-9]{2}|06 §12 Q[0-9]+)$`)

package doccheck

import (
	"go/scanner"
	"go/token"
	"regexp"
	"strings"
)

// Citation is one reference found in Go source: a register ID (E-3, D-22,
// 03b E-13, 06 §12 Q5, INV-7, …) or a section of a document (02 §4.1,
// catalogue §3, chapter 21 §5.2, 00-decisions).
type Citation struct {
	// Key is the normalised form that docs/ must define (see Normalise).
	Key string
	// Line is the 1-based line of the citation in its file.
	Line int
	// Problem is set when the citation cannot be resolved at all, for example
	// a "§4.1" with no document before it in the same comment paragraph.
	Problem string
}

// paragraph is a run of text (consecutive line comments, one block comment or
// one string literal) with the line of each of its lines.
type paragraph struct {
	lines []string
	first []int // line number of lines[i]
}

// ScanGo returns every citation in the comments and string literals of a Go
// source file. Identifiers and other code are not read, so a variable named
// A2 or S1 is never a citation.
func ScanGo(src []byte) []Citation {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var paras []paragraph
	var cur *paragraph
	lastCommentLine := -10
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		line := file.Line(pos)
		switch {
		case tok == token.COMMENT && strings.HasPrefix(lit, "//"):
			text := strings.TrimPrefix(lit, "//")
			if cur != nil && line == lastCommentLine+1 {
				cur.lines = append(cur.lines, text)
				cur.first = append(cur.first, line)
			} else {
				paras = append(paras, paragraph{lines: []string{text}, first: []int{line}})
				cur = &paras[len(paras)-1]
			}
			lastCommentLine = line
			continue
		case tok == token.COMMENT:
			paras = append(paras, splitLines(strings.TrimSuffix(strings.TrimPrefix(lit, "/*"), "*/"), line))
		case tok == token.STRING || tok == token.CHAR:
			paras = append(paras, splitLines(lit, line))
		}
		cur = nil
		lastCommentLine = -10
	}
	var out []Citation
	for _, p := range paras {
		out = append(out, scanParagraph(p)...)
	}
	return out
}

func splitLines(text string, line int) paragraph {
	var p paragraph
	for i, l := range strings.Split(text, "\n") {
		p.lines = append(p.lines, l)
		p.first = append(p.first, line+i)
	}
	return p
}

// The grammar of a citation. Documents of the behavioural specification are
// named by their number ("02", "03b") or their file name ("07-codecs",
// "00-decisions.md"); a section needs its document, given before it in the
// same paragraph ("02 §2.1, §2.5" cites 02 §2.1 and 02 §2.5).
var (
	// specDoc is a spec document by number or file name. A bare number
	// ("02") counts only when a section follows (specSection); a file name
	// counts alone.
	specDocName = `0[0-8][ab]?(?:-[a-z][a-z0-9]*(?:-[a-z0-9]+)*)?(?:\.md)?`
	// catalogue names one of the scenario catalogues.
	catalogueName = `(?:conformance-scenarios-[a-z]+(?:\.md)?|catalogue)`
	// chapterName is a chapter of the framework's own specification.
	chapterName = `(?:chapter|framework spec|SPEC-)\s?([0-9]{1,2})`

	tokenRE = regexp.MustCompile(strings.Join([]string{
		// 1: qualified IDs: "03b E-13", "06 §12 Q5".
		`\b(03b E-[0-9]{2}|06 §12 Q[0-9]+)\b`,
		// 2, 3: a document with a section.
		`\b(` + specDocName + `)\s+§\s?([0-9]+(?:\.[0-9]+)*)`,
		// 4: a spec document named by file name, alone.
		`\b(0[0-8][ab]?-[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\.md)?)`,
		// 5: a catalogue.
		`\b(` + catalogueName + `)`,
		// 6, 7: a framework chapter, with its section if one follows.
		`\b` + chapterName + `\b(?:\s+§\s?([0-9]+(?:\.[0-9]+)*))?`,
		// 8: a section (its document is the last one named).
		`§\s?([0-9]+(?:\.[0-9]+)*)`,
		// 9: register IDs.
		`\b((?:A|D|S)-[0-9]+|E-[0-9]+|INV-[0-9]+|Q[0-9]+)\b`,
	}, "|"))
)

const (
	gQualified   = 1
	gDoc         = 2
	gDocSection  = 3
	gDocAlone    = 4
	gCatalogue   = 5
	gChapter     = 6
	gChapterSect = 7
	gSection     = 8
	gID          = 9
)

// scanParagraph reads one paragraph left to right, its lines joined, so a
// citation wrapped over two comment lines ("08" at the end of one, "§4.6" at
// the start of the next) still reads as one. The document context (the last
// document named) carries over the whole paragraph.
func scanParagraph(p paragraph) []Citation {
	text := strings.Join(p.lines, "\n")
	lineAt := func(offset int) int {
		return p.first[strings.Count(text[:offset], "\n")]
	}
	var out []Citation
	doc := ""
	for _, m := range tokenRE.FindAllStringSubmatchIndex(text, -1) {
		group := func(g int) string {
			if m[2*g] < 0 {
				return ""
			}
			return text[m[2*g]:m[2*g+1]]
		}
		line := lineAt(m[0])
		switch {
		case group(gQualified) != "":
			out = append(out, Citation{Key: group(gQualified), Line: line})
		case group(gDoc) != "":
			doc = specDocNumber(group(gDoc))
			out = append(out, Citation{Key: doc + " §" + group(gDocSection), Line: line})
		case group(gDocAlone) != "":
			name := strings.TrimSuffix(group(gDocAlone), ".md")
			doc = specDocNumber(name)
			out = append(out, Citation{Key: name, Line: line})
		case group(gCatalogue) != "":
			doc = "catalogue"
		case group(gChapter) != "":
			doc = "chapter " + group(gChapter)
			key := doc
			if sec := group(gChapterSect); sec != "" {
				key += " §" + sec
			}
			out = append(out, Citation{Key: key, Line: line})
		case group(gSection) != "":
			sec := group(gSection)
			if doc == "" {
				out = append(out, Citation{Key: "§" + sec, Line: line,
					Problem: "section §" + sec + " is cited without its document (name the document before it, as in \"02 §" + sec + "\")"})
				continue
			}
			out = append(out, Citation{Key: doc + " §" + sec, Line: line})
		case group(gID) != "":
			out = append(out, Citation{Key: group(gID), Line: line})
		}
	}
	return out
}

// specDocNumber reduces "07-codecs.md" to "07".
func specDocNumber(name string) string {
	name = strings.TrimSuffix(name, ".md")
	if i := strings.IndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// Package doccheck keeps the code's citations resolvable inside the
// repository: every register ID (E-3, D-22, 03b E-13, INV-7, …) and every
// section of the behavioural specification (02 §4.1, catalogue §3,
// chapter 21 §5.2, 00-decisions) that a Go file cites in a comment or a
// string literal must be defined by a row of a table under docs/, and each
// register ID by exactly one row. docs/decisions.md describes the citation
// forms; the test of this package enforces them.
package doccheck

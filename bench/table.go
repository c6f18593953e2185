package main

import (
	"fmt"
	"io"
	"strings"
)

// table is one results table, printed as aligned Markdown so it can be
// pasted into the benchmark guide as it is.
type table struct {
	title  string
	header []string
	rows   [][]string
}

// newTable starts a table with the given column headers.
func newTable(title string, header ...string) *table { return &table{title: title, header: header} }

// add appends one row.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// print writes the table to w: the first column left-aligned, the others
// right-aligned.
func (t *table) print(w io.Writer) {
	widths := make([]int, len(t.header))
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, cell := range row {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", widths[i], cell)
				continue
			}
			fmt.Fprintf(&b, " %*s |", widths[i], cell)
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintf(w, "\n%s\n\n", t.title)
	line(t.header)
	sep := make([]string, len(widths))
	for i, n := range widths {
		if i == 0 {
			sep[i] = strings.Repeat("-", n)
		} else {
			sep[i] = strings.Repeat("-", n-1) + ":"
		}
	}
	line(sep)
	for _, row := range t.rows {
		line(row)
	}
}

// f1, f2 and f3 format a number with one, two or three decimals; f0 with none.
func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/eddystream/eddy/changelog"
)

// finalTable applies a changelog to an empty table, a multiset of rows:
// +I and +U add a row, -U and -D take one back. It returns the rows left,
// rendered with %v and sorted.
func finalTable[T comparable](changes []changelog.Change[T]) []string {
	count := map[T]int{}
	for _, c := range changes {
		if c.Kind.IsAddition() {
			count[c.Row]++
		} else {
			count[c.Row]--
		}
	}
	var rows []string
	for r, n := range count {
		for range n {
			rows = append(rows, fmt.Sprint(r))
		}
	}
	slices.Sort(rows)
	return rows
}

// printTable writes the rows of finalTable, one a line.
func printTable[T comparable](w io.Writer, changes []changelog.Change[T]) {
	for _, r := range finalTable(changes) {
		fmt.Fprintln(w, r)
	}
}

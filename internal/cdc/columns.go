package cdc

import "strings"

// ColumnIndex returns the index of the column called name among cols,
// whose names nameOf gives: an exact match first, then one without regard
// to case; -1 if there is none.
func ColumnIndex[T any](cols []T, nameOf func(*T) string, name string) int {
	for i := range cols {
		if nameOf(&cols[i]) == name {
			return i
		}
	}
	for i := range cols {
		if strings.EqualFold(nameOf(&cols[i]), name) {
			return i
		}
	}
	return -1
}

// ColumnNames returns the names of cols, comma-separated.
func ColumnNames[T any](cols []T, nameOf func(*T) string) string {
	names := make([]string, len(cols))
	for i := range cols {
		names[i] = nameOf(&cols[i])
	}
	return strings.Join(names, ", ")
}

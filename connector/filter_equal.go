package connector

import "github.com/eddystream/eddy/sql/types"

// MetadataColumn returns the index in t's rows (Table.RowType()) of the
// metadata column key when it is declared VARCHAR or STRING, or -1: the
// column a source can narrow what it reads by with StringEqualities. A
// CHAR(n) column does not count, since it compares padded values.
func MetadataColumn(t *Table, key string) int {
	for i, k := range t.Metadata {
		if k == key && t.MetadataTypes[i].Kind() == types.KindVarChar {
			return t.Schema.Len() + i
		}
	}
	return -1
}

// StringEqualities returns the predicates of preds that compare column col
// (a top-level column) for equality with a string constant for which
// valid, if not nil, holds: their indexes in preds, for ApplyFilters to
// return, and their constants.
func StringEqualities(preds []Predicate, col int, valid func(string) bool) (accepted []int, values []string) {
	for k, p := range preds {
		if len(p.Path) != 1 || p.Path[0] != col || p.Op != OpEqual {
			continue
		}
		v, ok := p.Value.(string)
		if !ok || (valid != nil && !valid(v)) {
			continue
		}
		accepted = append(accepted, k)
		values = append(values, v)
	}
	return accepted, values
}

package connector

// NotNullSource is implemented by sources of tables that know fields to be
// never NULL in the rows they emit although the table declares them
// nullable: the fields of one kind of event in a source filtered to that
// kind (FilterableSource), a column the source always sets. The planner
// then treats such a field as NOT NULL where that makes a query cheaper: a
// GROUP BY, PARTITION BY or window aggregation keyed by one such integer
// column keys its state, timers and exchange by the column's 64-bit value
// alone, without a NULL flag.
//
// The claim is a promise about every row: a source that emits a NULL in a
// field it reports never NULL makes the planner group that row with the
// value 0. connectortest.RunFilter and RunNotNull read the source and
// check every claim it makes.
type NotNullSource interface {
	// NotNull reports whether the field at path is never NULL in the rows
	// the source emits. A path is as a Predicate's: the index of a column
	// of the table's rows (physical then metadata columns), then the
	// indexes of fields of nested ROW values; it refers to the table's
	// rows also in a source that ProjectFields returned. A path inside a
	// ROW is never NULL only if that ROW is never NULL either. NotNull
	// returns false for a path it does not know.
	NotNull(path []int) bool
}

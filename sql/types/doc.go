// Package types holds the data types and values of eddy's SQL, with Flink's
// semantics: the logical types (Type, RowType), the binary row format that
// relational operators carry (Row, built by RowWriter into an Arena), typed
// O(1) field access, decimals (Decimal), temporal values (Date, Time,
// Timestamp), the text forms of values (what CAST(x AS STRING) gives and
// what CAST('...' AS T) accepts), Flink's print form of rows, JSON encoding
// and decoding of rows, ordering comparison, and key encoding.
//
// # Rows
//
// A Row is an immutable byte string in the layout of eddy's SQL design
// (little-endian throughout):
//
//   - a null bitmap of ceil(n/64)*8 bytes, bit i set when field i is NULL
//     (the slot of a NULL field is all zeros);
//   - a fixed part of 8 bytes per field: BOOLEAN (0/1), TINYINT..BIGINT
//     (sign-extended int64), FLOAT (float32 bits in the low 4 bytes), DOUBLE
//     (float64 bits), DATE (days since 1970-01-01), TIME (nanoseconds of the
//     day), TIMESTAMP(p)/TIMESTAMP_LTZ(p) with p <= 3 (milliseconds since the
//     epoch), DECIMAL(p, s) with p <= 18 (unscaled int64), INTERVAL YEAR TO
//     MONTH (months), INTERVAL DAY TO SECOND (milliseconds); for variable
//     length values (CHAR, VARCHAR, BINARY, VARBINARY, DECIMAL with p > 18,
//     TIMESTAMP with p > 3, ROW, ARRAY, MAP, MULTISET) offset<<32 | length,
//     the offset counted from the start of the row;
//   - a variable part holding those bytes in field order, without padding.
//
// A nested ROW's bytes are a Row of its type. An ARRAY is a uint32 count, a
// null bitmap, 8-byte slots and a variable part, offsets counted from the
// start of the array. A MAP (and a MULTISET, a map to INT counts) is a uint32
// length of its key array, the key array, then the value array. A TIMESTAMP
// with p > 3 is 12 bytes: int64 milliseconds then int32 nanoseconds of the
// millisecond. A DECIMAL with p > 18 is its unscaled value in big-endian
// two's complement, in as few bytes as hold it.
//
// The encoding is canonical: -0.0 is stored as +0.0 and every NaN as one bit
// pattern, NULL slots are zero and the variable part has no gaps, so equal
// values have equal bytes and Row is a comparable key for retraction. Maps
// keep their entries in the order they were written.
//
// The Row value is the byte string and its number of fields (needed to
// find the slots behind the bitmap); rows of one type are == exactly when
// their bytes are. A TIME is stored as nanoseconds of the day (Flink keeps
// milliseconds) so that TIME(9) loses nothing.
//
// Accessors do not check the type: the schema (RowType) is known statically
// where a row is read, and reading a field as another type than its own
// gives a meaningless value (never memory outside the row).
//
// # Writing rows
//
// A RowWriter writes rows of one RowType: Reset (every field NULL), Set each
// field with the setter of its type in any order, Finish into an Arena.
// Setting variable-length fields in field order (the usual case) is the
// fast path; any order, repeated sets and SetNull after a set give the same
// canonical bytes. Nested values are written by their own writers
// (RowWriter, ArrayWriter, MapWriter) and appended to the parent
// (SetRowFrom, SetArrayFrom, SetMapFrom) without going through the arena.
// BuildRow and SetValue take boxed values (Value) for constants and tests.
//
// # Semantics chosen where Flink's differ or are unspecified
//
//   - Decimal arithmetic and fitting return an error wrapping ErrOverflow
//     where Flink yields NULL; CastValue and ParseValue too. The JSON
//     decoder follows Flink (a DECIMAL beyond its precision is NULL).
//   - Maps keep their entries in the order written (Flink prints a Java
//     HashMap, whose order is unspecified); two maps with the same entries
//     in another order are different values.
//   - -0.0 is stored as +0.0, so it prints as 0.0 where Flink may print
//     -0.0.
//   - The print form shows TIMESTAMP_LTZ as a UTC instant (Java's
//     Instant.toString), as Flink's print connector does; CAST to STRING
//     shows it in the session time zone.
//
// # Text forms
//
// FormatValue and ParseValue give and take the text of CAST(x AS STRING) and
// CAST('...' AS T) (Flink 1.15 and later, not the legacy cast): TIMESTAMP
// '2015-07-15 08:00:00.001', booleans TRUE/FALSE, decimals in plain
// notation, arrays [1, 2], rows (1, a), maps {a=1}. FormatRow gives the form
// of Flink's print connector (Row.toString of the external row): +I[1001, 5],
// timestamps as 2015-07-15T08:00:00.001, nested rows +I[a, b], NULL as null.
package types

package types

import "github.com/eddystream/eddy/changelog"

// FormatRow returns r (of type rt) as Flink's print connector prints an
// insertion: "+I[1001, 5]". Fields are in the form of Java's toString of
// Flink's external objects: NULL as null, strings without quotes, booleans
// true/false, FLOAT and DOUBLE as Java prints them, DECIMAL as BigDecimal
// prints it ("1.50", "1.0E-7"), bytes as [1, -1], DATE 2020-01-01, TIME
// 08:00 or 08:00:01.5 (LocalTime), TIMESTAMP 2015-07-15T08:00:00.001
// (LocalDateTime: the seconds only when not zero), TIMESTAMP_LTZ
// 2015-07-15T08:00:00.001Z (Instant, in UTC), INTERVAL YEAR TO MONTH P1Y2M
// (Period), INTERVAL DAY TO SECOND PT1H2M3.004S (Duration), nested rows
// +I[a, b], arrays [1, null], maps and multisets {a=1, b=2}.
func FormatRow(rt *RowType, r Row) string {
	return string(AppendChange(nil, changelog.Insert, rt, r))
}

// FormatChange returns a change as Flink's print connector prints it:
// "-U[1001, 5]".
func FormatChange(kind changelog.Kind, rt *RowType, r Row) string {
	return string(AppendChange(nil, kind, rt, r))
}

// AppendChange appends FormatChange(kind, rt, r) to dst.
func AppendChange(dst []byte, kind changelog.Kind, rt *RowType, r Row) []byte {
	dst = append(dst, kind.String()...)
	return appendRowFields(dst, rt, r, '[', ']', printStyle, nil)
}

// AppendPrint appends field i of r in the print form (see FormatRow).
func AppendPrint(dst []byte, rt *RowType, r Row, i int) []byte {
	if r.IsNull(i) {
		return append(dst, "null"...)
	}
	return appendCell(dst, rt.fields[i].Type, r.b, r.slot(i), printStyle, nil)
}

package jdbc

import (
	"strings"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// goValue returns field i of row as a statement parameter: Go integers,
// floats, strings and bytes; DECIMAL as its exact text; temporal values as
// time.Time for PostgreSQL and as text for MySQL; nested values as their
// text.
func goValue(rt *types.RowType, row types.Row, i int, mysql bool) any {
	if row.IsNull(i) {
		return nil
	}
	t := rt.Field(i).Type
	switch t.Kind() {
	case types.KindBoolean:
		if mysql {
			if row.Bool(i) {
				return int64(1)
			}
			return int64(0)
		}
		return row.Bool(i)
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return row.Int64(i)
	case types.KindFloat:
		return row.Float32(i)
	case types.KindDouble:
		return row.Float64(i)
	case types.KindDecimal:
		return row.Decimal(i, t.Precision(), t.Scale()).String()
	case types.KindChar, types.KindVarChar:
		return strings.Clone(row.String(i))
	case types.KindBinary, types.KindVarBinary:
		return row.Binary(i)
	case types.KindDate:
		if mysql {
			return row.Date(i).String()
		}
		y, m, d := row.Date(i).Civil()
		return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	case types.KindTime:
		return row.Time(i).Format(t.Precision())
	case types.KindTimestamp, types.KindTimestampLTZ:
		ts := row.Timestamp(i, t.Precision())
		if mysql {
			return ts.Format(t.Precision())
		}
		return ts.UTC()
	}
	return string(types.AppendText(nil, rt, row, i, nil))
}

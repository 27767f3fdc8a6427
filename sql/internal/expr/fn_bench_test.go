package expr_test

import (
	"testing"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// BenchmarkNexmarkFunctions measures the built-ins the Nexmark queries
// call, on one row (a bid's fields), in ns and allocations per call.
func BenchmarkNexmarkFunctions(b *testing.B) {
	rt := types.MustRowType(
		types.F("dateTime", types.TimestampType(3)),
		types.F("url", types.String()),
		types.F("channel", types.String()),
		types.F("extra", types.String()),
	)
	row, err := buildRow(rt, []string{"2015-07-15 08:12:34.567",
		"https://www.nexmark.com/xjp/nvj/ncpd/item.htm?query=1&channel_id=1234567",
		"Google", "ZNnCzTmTKNVOyRfSpWuhAaReBKBhmMddA"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, sql string }{
		{"DATE_FORMAT/date", "DATE_FORMAT(dateTime, 'yyyy-MM-dd')"},
		{"DATE_FORMAT/time", "DATE_FORMAT(dateTime, 'HH:mm')"},
		{"SPLIT_INDEX", "SPLIT_INDEX(url, '/', 3)"},
		{"REGEXP_EXTRACT/group", "REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)"},
		{"REGEXP_EXTRACT/whole", "REGEXP_EXTRACT(url, 'channel_id=[0-9]+')"},
		{"LIKE/prefix", "url LIKE 'https://%'"},
		{"LIKE/contains", "extra LIKE '%AaRe%'"},
		{"LIKE/general", "extra LIKE 'Z_C%Aa%A'"},
		{"UPPER/lower", "UPPER(channel)"},
		{"UPPER/upper", "UPPER(extra)"},
		{"LOWER", "LOWER(channel)"},
		{"CHAR_LENGTH", "CHAR_LENGTH(extra)"},
	} {
		b.Run(c.name, func(b *testing.B) {
			n, err := parser.ParseExpr(c.sql)
			if err != nil {
				b.Fatal(err)
			}
			a := &expr.Analyzer{Src: c.sql, Scope: rowScope{rt}, Funcs: expr.Builtins()}
			e, err := a.Expr(n)
			if err != nil {
				b.Fatal(err)
			}
			ev, err := expr.Compile(e)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			switch ev.Class() {
			case expr.ClassString:
				f := ev.Str
				for i := 0; i < b.N; i++ {
					f(row)
				}
			case expr.ClassBool:
				f := ev.Bool
				for i := 0; i < b.N; i++ {
					f(row)
				}
			case expr.ClassInt:
				f := ev.Int
				for i := 0; i < b.N; i++ {
					f(row)
				}
			}
		})
	}
}

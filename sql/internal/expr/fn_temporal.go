package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/eddystream/eddy/sql/types"
)

// now is the clock of CURRENT_TIMESTAMP and the other functions of the
// current time.
var now = time.Now

// The temporal functions. A TIMESTAMP_LTZ is read in the session time zone
// (Loc) wherever a wall clock is needed, as in Flink.
func init() {
	extract := func(unit string) func(*Call, []*Eval) (*Eval, error) {
		return func(c *Call, args []*Eval) (*Eval, error) { return compileExtract(c, unit, args[len(args)-1]) }
	}
	register(&Builtin{
		Name: "EXTRACT",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 || !famStr.accepts(args[0]) || !(isDatetime(args[1]) || args[1].IsInterval() || args[1].Kind() == types.KindNull) {
				return types.Type{}, nil, &ArgError{"EXTRACT", args, "(unit FROM a datetime or an interval)"}
			}
			return nullableIfAny(types.BigInt(), args[1:]), []types.Type{args[0], nullToTimestamp(args[1])}, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			unit, _, _ := constString(c, 0)
			return compileExtract(c, unit, args[1])
		}},
		Check: func(c *Call) error {
			unit, _, ok := constString(c, 0)
			if !ok {
				return fmt.Errorf("EXTRACT needs a constant unit")
			}
			return checkExtract(unit, c.Args[1].Type())
		},
		Doc: "EXTRACT(unit FROM x): a field of the datetime or interval x as a BIGINT: YEAR, QUARTER, MONTH, WEEK (ISO), DAY, DOY, DOW (1 for Sunday), ISODOW (1 for Monday), ISOYEAR, HOUR, MINUTE, SECOND, MILLISECOND and MICROSECOND (with the seconds), NANOSECOND, EPOCH (seconds), DECADE, CENTURY, MILLENNIUM",
	})
	for _, f := range []struct{ name, unit, doc string }{
		{"YEAR", "YEAR", "the year"}, {"QUARTER", "QUARTER", "the quarter (1 to 4)"}, {"MONTH", "MONTH", "the month (1 to 12)"},
		{"WEEK", "WEEK", "the ISO week of the year (1 to 53)"}, {"DAYOFYEAR", "DOY", "the day of the year (1 to 366)"},
		{"DAYOFMONTH", "DAY", "the day of the month (1 to 31)"}, {"DAYOFWEEK", "DOW", "the day of the week (1 for Sunday to 7)"},
		{"HOUR", "HOUR", "the hour (0 to 23)"}, {"MINUTE", "MINUTE", "the minute (0 to 59)"}, {"SECOND", "SECOND", "the second (0 to 59)"},
	} {
		f := f
		dateUnit := f.unit != "HOUR" && f.unit != "MINUTE" && f.unit != "SECOND"
		register(&Builtin{
			Name: f.name,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 1 || !(isDatetime(args[0]) || args[0].Kind() == types.KindNull) ||
					dateUnit && args[0].Kind() == types.KindTime || !dateUnit && args[0].Kind() == types.KindDate {
					return types.Type{}, nil, &ArgError{f.name, args, map[bool]string{true: "a DATE or a timestamp", false: "a TIME or a timestamp"}[dateUnit]}
				}
				return nullableIfAny(types.BigInt(), args), []types.Type{nullToTimestamp(args[0])}, nil
			},
			Func: &Func{Compile: extract(f.unit)},
			Doc:  f.name + "(x): " + f.doc + " of x, as EXTRACT(" + f.unit + " FROM x)",
		})
	}
	register(&Builtin{
		Name: "DATE_FORMAT",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 || !famStr.accepts(args[1]) || !(args[0].IsTimestamp() || args[0].Kind() == types.KindDate || famStr.accepts(args[0])) {
				return types.Type{}, nil, &ArgError{"DATE_FORMAT", args, "(a timestamp, a DATE or a string, format STRING)"}
			}
			return types.String().Nullable(), []types.Type{famStr.cast(args[0]), famStr.cast(args[1])}, nil
		},
		Func:  &Func{Compile: compileDateFormat},
		Check: checkConstString(1, func(s string) error { _, err := parseDateFormat(s); return err }),
		Doc:   "DATE_FORMAT(x, format): the timestamp, date or timestamp string x as text in format, a pattern of Java's date-time letters (yyyy-MM-dd HH:mm:ss.SSS, E, a, Z, ...); a TIMESTAMP_LTZ in the session time zone; NULL for a string that is not a timestamp",
	})
	register(&Builtin{
		Name: "TO_TIMESTAMP",
		Resolve: resolver("TO_TIMESTAMP", "(string [, format])", forceNullable(types.TimestampType(3)),
			sigOf(famStr), sigOf(famStr, famStr)),
		Func:  &Func{Compile: compileParseTime},
		Check: checkConstString(1, func(s string) error { _, err := parseDateFormat(s); return err }),
		Doc:   "TO_TIMESTAMP(string [, format]): the TIMESTAMP(3) that string shows in format (yyyy-MM-dd HH:mm:ss by default); NULL if it does not parse",
	})
	register(&Builtin{
		Name:    "TO_DATE",
		Resolve: resolver("TO_DATE", "(string [, format])", forceNullable(types.DateType()), sigOf(famStr), sigOf(famStr, famStr)),
		Func:    &Func{Compile: compileParseTime},
		Check:   checkConstString(1, func(s string) error { _, err := parseDateFormat(s); return err }),
		Doc:     "TO_DATE(string [, format]): the DATE that string shows in format (yyyy-MM-dd by default); NULL if it does not parse",
	})
	register(&Builtin{
		Name: "UNIX_TIMESTAMP",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 0 {
				return types.BigInt().NotNull(), nil, nil
			}
			return resolver("UNIX_TIMESTAMP", "() or (string [, format])", fixed(types.BigInt()), sigOf(famStr), sigOf(famStr, famStr))(args)
		},
		Func: &Func{Volatile: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			if len(args) == 0 {
				return &Eval{Int: func(types.Row) (int64, bool) { return now().Unix(), false }}, nil
			}
			return compileParseTime(c, args)
		}},
		Check: checkConstString(1, func(s string) error { _, err := parseDateFormat(s); return err }),
		Doc:   "UNIX_TIMESTAMP() or UNIX_TIMESTAMP(string [, format]): the current epoch seconds, or those of the wall clock string shows in format (yyyy-MM-dd HH:mm:ss by default) in the session time zone (or the offset string shows); -9223372036854775808 if it does not parse",
	})
	register(&Builtin{
		Name: "FROM_UNIXTIME",
		Resolve: resolver("FROM_UNIXTIME", "(seconds [, format])", forceNullable(types.String()),
			sigOf(famInt), sigOf(famInt, famStr)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			secs := args[0].Int
			return formatEval(c, args, 1, "yyyy-MM-dd HH:mm:ss", func(r types.Row) (time.Time, int, bool) {
				v, null := secs(r)
				return time.Unix(v, 0).In(Loc), 0, null
			})
		}},
		Check: checkConstString(1, func(s string) error { _, err := parseDateFormat(s); return err }),
		Doc:   "FROM_UNIXTIME(seconds [, format]): the epoch seconds as text in format (yyyy-MM-dd HH:mm:ss by default) in the session time zone",
	})
	register(&Builtin{
		Name: "TO_TIMESTAMP_LTZ",
		Resolve: resolver("TO_TIMESTAMP_LTZ", "(epoch number, precision 0 or 3)", forceNullable(types.TimestampLTZType(3)),
			sigOf(famNum, famInt)),
		Func: &Func{Compile: compileToTimestampLTZ},
		Check: func(c *Call) error {
			if v, ok := constArg(c, 1); ok && v != nil {
				if p, _ := intOf(v); p != 0 && p != 3 {
					return fmt.Errorf("TO_TIMESTAMP_LTZ: the precision %d is not supported: use 0 for epoch seconds or 3 for epoch milliseconds", p)
				}
			}
			return nil
		},
		Doc: "TO_TIMESTAMP_LTZ(n, precision): the TIMESTAMP_LTZ(3) of n epoch seconds (precision 0) or milliseconds (precision 3)",
	})
	register(&Builtin{
		Name: "TIMESTAMPADD",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 3 || !famStr.accepts(args[0]) || !famInt.accepts(args[1]) || !(isDatetime(args[2]) || args[2].Kind() == types.KindNull) {
				return types.Type{}, nil, &ArgError{"TIMESTAMPADD", args, "(unit, INT, a datetime)"}
			}
			t := nullToTimestamp(args[2])
			return nullableIfAny(t, args), []types.Type{args[0], famInt.cast(args[1]), t}, nil
		},
		Func: &Func{Compile: compileTimestampAdd},
		Check: func(c *Call) error {
			unit, _, ok := constString(c, 0)
			if !ok || addUnits[unit] == 0 && unit != "MONTH" {
				return fmt.Errorf("TIMESTAMPADD takes a unit YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND or MILLISECOND, not %s", c.Args[0])
			}
			if t := c.Args[2].Type(); t.Kind() == types.KindDate && addUnits[unit] > 0 && addUnits[unit] < types.MillisPerDay {
				c.T = types.TimestampType(0).WithNullability(c.T.IsNullable())
				if unit == "MILLISECOND" {
					c.T = types.TimestampType(3).WithNullability(c.T.IsNullable())
				}
			}
			return nil
		},
		Doc: "TIMESTAMPADD(unit, n, datetime): datetime plus n units (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND); a DATE plus hours, minutes or seconds is a TIMESTAMP",
	})
	register(&Builtin{
		Name: "TIMESTAMPDIFF",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 3 || !famStr.accepts(args[0]) || !(isDatetime(args[1]) || args[1].Kind() == types.KindNull) || !(isDatetime(args[2]) || args[2].Kind() == types.KindNull) {
				return types.Type{}, nil, &ArgError{"TIMESTAMPDIFF", args, "(unit, datetime1, datetime2)"}
			}
			return nullableIfAny(types.Int(), args), []types.Type{args[0], nullToTimestamp(args[1]), nullToTimestamp(args[2])}, nil
		},
		Func: &Func{Compile: compileTimestampDiff},
		Check: func(c *Call) error {
			unit, _, ok := constString(c, 0)
			if !ok || addUnits[unit] == 0 && unit != "MONTH" {
				return fmt.Errorf("TIMESTAMPDIFF takes a unit YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE or SECOND, not %s", c.Args[0])
			}
			return nil
		},
		Doc: "TIMESTAMPDIFF(unit, datetime1, datetime2): the (signed, whole) number of units from datetime1 to datetime2, an INT",
	})
	register(&Builtin{
		Name:    "CONVERT_TZ",
		Resolve: resolver("CONVERT_TZ", "(string, from_zone, to_zone)", forceNullable(types.String()), sigOf(famStr, famStr, famStr)),
		Func:    &Func{Compile: compileConvertTZ},
		Check: func(c *Call) error {
			for i := 1; i <= 2; i++ {
				if z, null, ok := constString(c, i); ok && !null {
					if _, err := loadZone(z); err != nil {
						return fmt.Errorf("CONVERT_TZ: %w", err)
					}
				}
			}
			return nil
		},
		Doc: "CONVERT_TZ(string, from_zone, to_zone): the timestamp text string (yyyy-MM-dd HH:mm:ss) of zone from_zone as text in to_zone; zones are IDs (Europe/Berlin), offsets (GMT-08:00) or Java's abbreviations (PST)",
	})
	current := []struct {
		name, doc string
		t         types.Type
		f         func(time.Time) types.Value
	}{
		{"CURRENT_TIMESTAMP", "the current instant, a TIMESTAMP_LTZ(3)", types.TimestampLTZType(3), func(t time.Time) types.Value { return types.TimestampFromMillis(t.UnixMilli()) }},
		{"PROCTIME", "the processing time, a TIMESTAMP_LTZ(3): the current instant; a column computed by PROCTIME() is a processing-time attribute, which windows and temporal joins can use", types.TimestampLTZType(3), func(t time.Time) types.Value { return types.TimestampFromMillis(t.UnixMilli()) }},
		{"NOW", "the current instant, a TIMESTAMP_LTZ(3) (as CURRENT_TIMESTAMP)", types.TimestampLTZType(3), func(t time.Time) types.Value { return types.TimestampFromMillis(t.UnixMilli()) }},
		{"CURRENT_ROW_TIMESTAMP", "the current instant, a TIMESTAMP_LTZ(3)", types.TimestampLTZType(3), func(t time.Time) types.Value { return types.TimestampFromMillis(t.UnixMilli()) }},
		{"LOCALTIMESTAMP", "the current wall clock of the session time zone, a TIMESTAMP(3)", types.TimestampType(3), func(t time.Time) types.Value {
			return types.TimestampFromMillis(t.UnixMilli()).ToLocal(Loc)
		}},
		{"CURRENT_DATE", "the current date in the session time zone", types.DateType(), func(t time.Time) types.Value {
			return types.TimestampFromMillis(t.UnixMilli()).ToLocal(Loc).Date()
		}},
		{"CURRENT_TIME", "the current time of day in the session time zone, a TIME(0)", types.TimeType(0), func(t time.Time) types.Value {
			return types.TimestampFromMillis(t.Unix() * 1000).ToLocal(Loc).TimeOfDay()
		}},
		{"LOCALTIME", "the current time of day in the session time zone, a TIME(0)", types.TimeType(0), func(t time.Time) types.Value {
			return types.TimestampFromMillis(t.Unix() * 1000).ToLocal(Loc).TimeOfDay()
		}},
	}
	for _, cur := range current {
		cur := cur
		register(&Builtin{
			Name: cur.name,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 0 {
					return types.Type{}, nil, &ArgError{cur.name, args, "no arguments"}
				}
				return cur.t.NotNull(), nil, nil
			},
			Func: &Func{Volatile: true, Compile: func(c *Call, _ []*Eval) (*Eval, error) {
				if c.T.Kind() == types.KindTimestampLTZ {
					// The current instant, unboxed: PROCTIME() runs for
					// every row of a processing-time query.
					return &Eval{T: c.T, TS: func(types.Row) (types.Timestamp, bool) {
						return types.TimestampFromMillis(now().UnixMilli()), false
					}}, nil
				}
				return unboxer(c.T)(func(types.Row) (types.Value, bool) { return cur.f(now()), false }), nil
			}},
			Doc: cur.name + ": " + cur.doc + "; evaluated for every row",
		})
	}
}

// nullToTimestamp types an untyped NULL datetime argument.
func nullToTimestamp(t types.Type) types.Type {
	if t.Kind() == types.KindNull {
		return types.TimestampType(3).Nullable()
	}
	return t
}

// wallClock returns a function giving the wall clock of a datetime x (a
// TIMESTAMP_LTZ in the session zone) as a time.Time in UTC and the
// nanoseconds of its second.
func wallClock(x *Eval) func(types.Row) (time.Time, bool) {
	switch x.T.Kind() {
	case types.KindDate:
		f := x.Int
		return func(r types.Row) (time.Time, bool) {
			d, null := f(r)
			return time.Unix(d*86400, 0).UTC(), null
		}
	case types.KindTime:
		f := x.Int
		return func(r types.Row) (time.Time, bool) {
			ns, null := f(r)
			return time.Unix(0, ns).UTC(), null
		}
	}
	f, ltz := x.TS, x.T.Kind() == types.KindTimestampLTZ
	return func(r types.Row) (time.Time, bool) {
		ts, null := f(r)
		if null {
			return time.Time{}, true
		}
		if ltz {
			ts = ts.ToLocal(Loc)
		}
		return time.UnixMilli(ts.Millis).Add(time.Duration(ts.NanoOfMilli)).UTC(), false
	}
}

var extractUnitsDate = map[string]bool{"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true, "DOY": true,
	"DOW": true, "ISODOW": true, "ISOYEAR": true, "DECADE": true, "CENTURY": true, "MILLENNIUM": true, "EPOCH": true}
var extractUnitsTime = map[string]bool{"HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true, "MICROSECOND": true, "NANOSECOND": true, "EPOCH": true}

func checkExtract(unit string, t types.Type) error {
	ok := false
	switch {
	case t.Kind() == types.KindDate:
		ok = extractUnitsDate[unit]
	case t.Kind() == types.KindTime:
		ok = extractUnitsTime[unit]
	case t.Kind() == types.KindIntervalYearMonth:
		ok = unit == "YEAR" || unit == "MONTH" || unit == "QUARTER"
	case t.Kind() == types.KindIntervalDayTime:
		ok = extractUnitsTime[unit] || unit == "DAY"
	default:
		ok = extractUnitsDate[unit] || extractUnitsTime[unit]
	}
	if !ok {
		return fmt.Errorf("cannot extract %s from %s", unit, t)
	}
	return nil
}

func compileExtract(c *Call, unit string, x *Eval) (*Eval, error) {
	if x.T.IsInterval() {
		f := x.Int
		var g func(v int64) int64
		switch unit {
		case "YEAR":
			g = func(v int64) int64 { return v / 12 }
		case "QUARTER":
			g = func(v int64) int64 { return v%12/3 + 1 }
		case "MONTH":
			g = func(v int64) int64 { return v % 12 }
		case "DAY":
			g = func(v int64) int64 { return v / types.MillisPerDay }
		case "HOUR":
			g = func(v int64) int64 { return v / 3600000 % 24 }
		case "MINUTE":
			g = func(v int64) int64 { return v / 60000 % 60 }
		case "SECOND":
			g = func(v int64) int64 { return v / 1000 % 60 }
		case "MILLISECOND":
			g = func(v int64) int64 { return v % 60000 }
		case "MICROSECOND":
			g = func(v int64) int64 { return v % 60000 * 1000 }
		case "NANOSECOND":
			g = func(v int64) int64 { return v % 60000 * 1000000 }
		case "EPOCH":
			g = func(v int64) int64 { return v / 1000 }
		default:
			return nil, fmt.Errorf("sql: cannot extract %s from %s", unit, x.T)
		}
		return &Eval{Int: func(r types.Row) (int64, bool) { v, n := f(r); return g(v), n }}, nil
	}
	if unit == "EPOCH" && x.T.IsTimestamp() {
		f := x.TS
		return &Eval{Int: func(r types.Row) (int64, bool) { ts, n := f(r); return floorDiv(ts.Millis, 1000), n }}, nil
	}
	wc := wallClock(x)
	var g func(t time.Time) int64
	switch unit {
	case "YEAR":
		g = func(t time.Time) int64 { return int64(t.Year()) }
	case "QUARTER":
		g = func(t time.Time) int64 { return int64((t.Month()-1)/3 + 1) }
	case "MONTH":
		g = func(t time.Time) int64 { return int64(t.Month()) }
	case "WEEK":
		g = func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) }
	case "ISOYEAR":
		g = func(t time.Time) int64 { y, _ := t.ISOWeek(); return int64(y) }
	case "DAY":
		g = func(t time.Time) int64 { return int64(t.Day()) }
	case "DOY":
		g = func(t time.Time) int64 { return int64(t.YearDay()) }
	case "DOW":
		g = func(t time.Time) int64 { return int64(t.Weekday()) + 1 }
	case "ISODOW":
		g = func(t time.Time) int64 { return (int64(t.Weekday())+6)%7 + 1 }
	case "DECADE":
		g = func(t time.Time) int64 { return int64(floorDiv(int64(t.Year()), 10)) }
	case "CENTURY":
		g = func(t time.Time) int64 {
			y := int64(t.Year())
			if y > 0 {
				return (y + 99) / 100
			}
			return -((-y + 99) / 100)
		}
	case "MILLENNIUM":
		g = func(t time.Time) int64 {
			y := int64(t.Year())
			if y > 0 {
				return (y + 999) / 1000
			}
			return -((-y + 999) / 1000)
		}
	case "HOUR":
		g = func(t time.Time) int64 { return int64(t.Hour()) }
	case "MINUTE":
		g = func(t time.Time) int64 { return int64(t.Minute()) }
	case "SECOND":
		g = func(t time.Time) int64 { return int64(t.Second()) }
	case "MILLISECOND":
		g = func(t time.Time) int64 { return int64(t.Second())*1000 + int64(t.Nanosecond())/1e6 }
	case "MICROSECOND":
		g = func(t time.Time) int64 { return int64(t.Second())*1e6 + int64(t.Nanosecond())/1e3 }
	case "NANOSECOND":
		g = func(t time.Time) int64 { return int64(t.Second())*1e9 + int64(t.Nanosecond()) }
	case "EPOCH":
		g = func(t time.Time) int64 { return t.Unix() }
	default:
		return nil, fmt.Errorf("sql: cannot extract %s from %s", unit, x.T)
	}
	return &Eval{Int: func(r types.Row) (int64, bool) {
		t, null := wc(r)
		if null {
			return 0, true
		}
		return g(t), false
	}}, nil
}

// formatEval compiles the formatting of the wall clock get gives with the
// format of argument i (def if absent).
func formatEval(c *Call, args []*Eval, i int, def string, get func(types.Row) (time.Time, int, bool)) (*Eval, error) {
	var fmtOf func(types.Row) (*dateFormat, bool)
	if i >= len(args) {
		f, _ := parseDateFormat(def)
		fmtOf = func(types.Row) (*dateFormat, bool) { return f, false }
	} else if p, null, ok := constStringEval(args[i]); ok {
		if null {
			return constEval(c.T, nil)
		}
		f, err := parseDateFormat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		fmtOf = func(types.Row) (*dateFormat, bool) { return f, false }
	} else {
		g, cache := args[i].Str, newPatternCache(parseDateFormat)
		fmtOf = func(r types.Row) (*dateFormat, bool) {
			p, null := g(r)
			if null {
				return nil, true
			}
			f, err := cache.get(p)
			if err != nil {
				failErr(c, err)
			}
			return f, false
		}
	}
	var buf []byte
	return &Eval{Str: func(r types.Row) (string, bool) {
		t, nanos, null := get(r)
		if null {
			return "", true
		}
		f, null := fmtOf(r)
		if null {
			return "", true
		}
		off := 0
		zone := "UTC"
		if f.hasZone {
			zone, off = t.Zone()
			if n := t.Location().String(); n != "" && n != "Local" {
				zone = n
			}
		}
		buf = f.format(buf[:0], t, nanos, off, zone)
		return string(buf), false
	}}, nil
}

func compileDateFormat(c *Call, args []*Eval) (*Eval, error) {
	x := args[0]
	var get func(types.Row) (time.Time, int, bool)
	switch x.T.Kind() {
	case types.KindTimestampLTZ:
		f := x.TS
		get = func(r types.Row) (time.Time, int, bool) {
			ts, null := f(r)
			t := time.UnixMilli(ts.Millis).In(Loc)
			return t, int(ts.Millis%1000+1000)%1000*1e6 + int(ts.NanoOfMilli), null
		}
	case types.KindTimestamp, types.KindDate:
		wc := wallClock(x)
		get = func(r types.Row) (time.Time, int, bool) {
			t, null := wc(r)
			return t, t.Nanosecond(), null
		}
	default:
		f := x.Str
		get = func(r types.Row) (time.Time, int, bool) {
			s, null := f(r)
			if null {
				return time.Time{}, 0, true
			}
			ts, err := types.ParseTimestamp(s, 9)
			if err != nil {
				return time.Time{}, 0, true
			}
			t := time.UnixMilli(ts.Millis).Add(time.Duration(ts.NanoOfMilli)).UTC()
			return t, t.Nanosecond(), false
		}
	}
	ev, err := formatEval(c, args, 1, "yyyy-MM-dd HH:mm:ss", get)
	if err == nil && x.T.Kind() == types.KindTimestamp && len(args) > 1 {
		if p, null, ok := constStringEval(args[1]); ok && !null {
			if f, err := parseDateFormat(p); err == nil {
				ev = memoDateFormat(ev, x.TS, f)
			}
		}
	}
	return ev, err
}

// compileParseTime compiles TO_TIMESTAMP, TO_DATE and UNIX_TIMESTAMP of a
// string.
func compileParseTime(c *Call, args []*Eval) (*Eval, error) {
	x := args[0].Str
	def := "yyyy-MM-dd HH:mm:ss"
	if c.Name == "TO_DATE" {
		def = "yyyy-MM-dd"
	}
	var fmtOf func(types.Row) (*dateFormat, bool)
	explicit := len(args) == 2
	if !explicit {
		f, _ := parseDateFormat(def)
		fmtOf = func(types.Row) (*dateFormat, bool) { return f, false }
	} else if p, null, ok := constStringEval(args[1]); ok {
		if null {
			return constEval(c.T, nil)
		}
		f, err := parseDateFormat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		fmtOf = func(types.Row) (*dateFormat, bool) { return f, false }
	} else {
		g, cache := args[1].Str, newPatternCache(parseDateFormat)
		fmtOf = func(r types.Row) (*dateFormat, bool) {
			p, null := g(r)
			if null {
				return nil, true
			}
			f, err := cache.get(p)
			if err != nil {
				failErr(c, err)
			}
			return f, false
		}
	}
	// parse gives the wall clock as a timestamp, and the offset if the text
	// has one.
	parse := func(r types.Row) (ts types.Timestamp, off int, hasOff, null, ok bool) {
		s, null := x(r)
		if null {
			return ts, 0, false, true, false
		}
		f, null := fmtOf(r)
		if null {
			return ts, 0, false, true, false
		}
		if !explicit && c.Name != "UNIX_TIMESTAMP" {
			// Without a format, Flink reads the text as CAST does.
			var err error
			if c.Name == "TO_DATE" {
				d, err := types.ParseDate(s)
				return types.TimestampFromMillis(int64(d) * types.MillisPerDay), 0, false, false, err == nil
			}
			ts, err = types.ParseTimestamp(s, 3)
			return ts, 0, false, false, err == nil
		}
		p, err := f.parse(strings.TrimSpace(s))
		if err != nil {
			return ts, 0, false, false, false
		}
		return types.TimestampOf(p.year, p.month, p.day, p.hour, p.minute, p.second, p.nanos), p.offset, p.hasOffset, false, true
	}
	switch c.Name {
	case "TO_DATE":
		return &Eval{Int: func(r types.Row) (int64, bool) {
			ts, _, _, null, ok := parse(r)
			if null || !ok {
				return 0, true
			}
			return int64(ts.Date()), false
		}}, nil
	case "TO_TIMESTAMP":
		return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
			ts, _, _, null, ok := parse(r)
			if null || !ok {
				return types.Timestamp{}, true
			}
			return ts.Truncate(3), false
		}}, nil
	}
	return &Eval{Int: func(r types.Row) (int64, bool) {
		ts, off, hasOff, null, ok := parse(r)
		if null {
			return 0, true
		}
		if !ok {
			return math.MinInt64, false
		}
		if hasOff {
			return floorDiv(ts.Millis, 1000) - int64(off), false
		}
		return floorDiv(ts.FromLocal(Loc).Millis, 1000), false
	}}, nil
}

func compileToTimestampLTZ(c *Call, args []*Eval) (*Eval, error) {
	prec := args[1].Int
	scale := func(p int64) float64 {
		if p == 0 {
			return 1000
		}
		if p != 3 {
			fail(c, "the precision %d is not supported: use 0 for epoch seconds or 3 for epoch milliseconds", p)
		}
		return 1
	}
	switch args[0].Class() {
	case ClassInt:
		f := args[0].Int
		return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
			v, n1 := f(r)
			p, n2 := prec(r)
			if n1 || n2 {
				return types.Timestamp{}, true
			}
			return types.TimestampFromMillis(v * int64(scale(p))), false
		}}, nil
	}
	f := asFloat(args[0])
	return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
		v, n1 := f(r)
		p, n2 := prec(r)
		if n1 || n2 || math.IsNaN(v) || math.IsInf(v, 0) {
			return types.Timestamp{}, true
		}
		return types.TimestampFromMillis(int64(math.Floor(v * scale(p)))), false
	}}, nil
}

// addUnits are the units of TIMESTAMPADD and TIMESTAMPDIFF in
// milliseconds; months count in months (-n for n months).
var addUnits = map[string]int64{
	"YEAR": -12, "QUARTER": -3, "MONTH": -1, "WEEK": 7 * types.MillisPerDay, "DAY": types.MillisPerDay,
	"HOUR": 3600000, "MINUTE": 60000, "SECOND": 1000, "MILLISECOND": 1,
}

func compileTimestampAdd(c *Call, args []*Eval) (*Eval, error) {
	unit, _, _ := constString(c, 0)
	step := addUnits[unit]
	n, x := args[1].Int, args[2]
	switch {
	case x.T.Kind() == types.KindDate && c.T.IsTimestamp():
		f := x.Int
		return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
			d, n1 := f(r)
			k, n2 := n(r)
			return types.TimestampFromMillis(d*types.MillisPerDay + k*step), n1 || n2
		}}, nil
	case x.T.Kind() == types.KindDate:
		f := x.Int
		return &Eval{Int: func(r types.Row) (int64, bool) {
			d, n1 := f(r)
			k, n2 := n(r)
			if n1 || n2 {
				return 0, true
			}
			if step < 0 {
				return int64(addMonths(types.Date(d), -step*k)), false
			}
			return d + k*step/types.MillisPerDay, false
		}}, nil
	case x.T.Kind() == types.KindTime:
		f := x.Int
		return &Eval{Int: func(r types.Row) (int64, bool) {
			t, n1 := f(r)
			k, n2 := n(r)
			if n1 || n2 || step < 0 {
				return t, n1 || n2
			}
			ns := (t + k*step*types.NanosPerMilli) % types.NanosPerDay
			if ns < 0 {
				ns += types.NanosPerDay
			}
			return ns, false
		}}, nil
	}
	f, ltz := x.TS, x.T.Kind() == types.KindTimestampLTZ
	return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
		ts, n1 := f(r)
		k, n2 := n(r)
		if n1 || n2 {
			return types.Timestamp{}, true
		}
		if step > 0 {
			ts.Millis += k * step
			return ts, false
		}
		if ltz {
			ts = ts.ToLocal(Loc)
		}
		d := ts.Date()
		ms := ts.Millis - int64(d)*types.MillisPerDay
		ts.Millis = int64(addMonths(d, -step*k))*types.MillisPerDay + ms
		if ltz {
			ts = ts.FromLocal(Loc)
		}
		return ts, false
	}}, nil
}

// epochNanosOf returns a function giving a datetime as nanoseconds of its
// wall clock since the epoch (a TIME from the epoch day).
func epochNanosOf(x *Eval) func(types.Row) (int64, bool) {
	switch x.T.Kind() {
	case types.KindDate:
		f := x.Int
		return func(r types.Row) (int64, bool) { d, n := f(r); return d * types.MillisPerDay * types.NanosPerMilli, n }
	case types.KindTime:
		return x.Int
	}
	f, ltz := x.TS, x.T.Kind() == types.KindTimestampLTZ
	return func(r types.Row) (int64, bool) {
		ts, null := f(r)
		if ltz && !null {
			ts = ts.ToLocal(Loc)
		}
		return ts.Millis*types.NanosPerMilli + int64(ts.NanoOfMilli), null
	}
}

func compileTimestampDiff(c *Call, args []*Eval) (*Eval, error) {
	unit, _, _ := constString(c, 0)
	step := addUnits[unit]
	a, b := epochNanosOf(args[1]), epochNanosOf(args[2])
	check := func(v int64) int64 {
		if v < math.MinInt32 || v > math.MaxInt32 {
			fail(c, "the result %d overflows INT", v)
		}
		return v
	}
	if step > 0 {
		unitNanos := step * types.NanosPerMilli
		return &Eval{Int: func(r types.Row) (int64, bool) {
			u, n1 := a(r)
			v, n2 := b(r)
			if n1 || n2 {
				return 0, true
			}
			return check((v - u) / unitNanos), false
		}}, nil
	}
	months := -step
	return &Eval{Int: func(r types.Row) (int64, bool) {
		u, n1 := a(r)
		v, n2 := b(r)
		if n1 || n2 {
			return 0, true
		}
		return check(monthsBetween(u, v) / months), false
	}}, nil
}

// monthsBetween returns the whole months from wall clock u to v
// (nanoseconds since the epoch) as Calcite counts them: the most months
// that, added to u's date (keeping the day or the month's last), do not pass
// v, less one if that lands on v's day at a later time of day.
func monthsBetween(u, v int64) int64 {
	if u > v {
		return -monthsBetween(v, u)
	}
	d0, d1 := floorDiv(u, types.NanosPerDay), floorDiv(v, types.NanosPerDay)
	t0, t1 := u-d0*types.NanosPerDay, v-d1*types.NanosPerDay
	m := (d1 - d0) * 12 / 365
	for {
		if int64(addMonths(types.Date(d0), m+1)) > d1 {
			break
		}
		m++
	}
	for m > 0 && int64(addMonths(types.Date(d0), m)) > d1 {
		m--
	}
	if int64(addMonths(types.Date(d0), m)) == d1 && t1 < t0 {
		m--
	}
	return m
}

// javaShortZones are Java's ZoneId.SHORT_IDS.
var javaShortZones = map[string]string{
	"EST": "-05:00", "HST": "-10:00", "MST": "-07:00", "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
	"AGT": "America/Argentina/Buenos_Aires", "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
	"EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland", "PLT": "Asia/Karachi",
	"PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh",
}

// loadZone resolves a Java zone ID: a region, an offset (+08:00,
// GMT-08:00, UTC+8) or a short ID.
func loadZone(name string) (*time.Location, error) {
	z := strings.TrimSpace(name)
	if s, ok := javaShortZones[z]; ok {
		z = s
	}
	for _, prefix := range []string{"GMT", "UTC", "UT", ""} {
		rest, ok := strings.CutPrefix(z, prefix)
		if !ok || rest == "" || rest[0] != '+' && rest[0] != '-' {
			continue
		}
		sign := 1
		if rest[0] == '-' {
			sign = -1
		}
		hh, mm, _ := strings.Cut(rest[1:], ":")
		h, err1 := strconv.Atoi(hh)
		m := 0
		var err2 error
		if mm != "" {
			m, err2 = strconv.Atoi(mm)
		}
		if err1 != nil || err2 != nil || h > 18 || m > 59 {
			return nil, fmt.Errorf("bad time zone %q", name)
		}
		return time.FixedZone(z, sign*(h*3600+m*60)), nil
	}
	if z == "Z" || z == "GMT" || z == "UT" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(z)
	if err != nil || z == "" || z == "Local" {
		return nil, fmt.Errorf("unknown time zone %q: use a region ID (Europe/Berlin), an offset (GMT-08:00) or UTC", name)
	}
	return loc, nil
}

func compileConvertTZ(c *Call, args []*Eval) (*Eval, error) {
	x, from, to := args[0].Str, args[1].Str, args[2].Str
	zones := newPatternCache(loadZone)
	f, _ := parseDateFormat("yyyy-MM-dd HH:mm:ss")
	var buf []byte
	return &Eval{Str: func(r types.Row) (string, bool) {
		s, n1 := x(r)
		fz, n2 := from(r)
		tz, n3 := to(r)
		if n1 || n2 || n3 {
			return "", true
		}
		lf, err := zones.get(fz)
		if err != nil {
			failErr(c, err)
		}
		lt, err := zones.get(tz)
		if err != nil {
			failErr(c, err)
		}
		ts, err := types.ParseTimestamp(s, 3)
		if err != nil {
			return "", true
		}
		inst := ts.FromLocal(lf)
		t := time.UnixMilli(inst.Millis).In(lt)
		buf = f.format(buf[:0], t, 0, 0, "")
		return string(buf), false
	}}, nil
}

// floorUnits are the units of FLOOR and CEIL of datetimes.
var floorUnits = map[string]bool{"YEAR": true, "QUARTER": true, "MONTH": true, "WEEK": true, "DAY": true,
	"HOUR": true, "MINUTE": true, "SECOND": true, "MILLISECOND": true}

func resolveFloorCeil(name string) func([]types.Type) (types.Type, []types.Type, error) {
	return func(args []types.Type) (types.Type, []types.Type, error) {
		want := "a number, or (a datetime TO unit)"
		switch {
		case len(args) == 1 && famNum.accepts(args[0]):
			t := famNum.cast(args[0])
			if t.Kind() == types.KindDecimal {
				t = roundDecimalType(t.Precision(), t.Scale(), 0).WithNullability(t.IsNullable())
			}
			return t, []types.Type{famNum.cast(args[0])}, nil
		case len(args) == 2 && isDatetime(args[0]) && famStr.accepts(args[1]):
			return args[0], nil, nil
		}
		return types.Type{}, nil, &ArgError{name, args, want}
	}
}

func checkFloorUnit(c *Call) error {
	if len(c.Args) != 2 {
		return nil
	}
	unit, _, ok := constString(c, 1)
	if !ok || !floorUnits[unit] {
		return fmt.Errorf("%s takes a unit YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND or MILLISECOND, not %s", c.Name, c.Args[1])
	}
	t := c.Args[0].Type().Kind()
	if t == types.KindTime && (unit == "YEAR" || unit == "QUARTER" || unit == "MONTH" || unit == "WEEK") {
		return fmt.Errorf("%s of a TIME cannot be to %s", c.Name, unit)
	}
	return nil
}

// floorNanos rounds a wall clock (nanoseconds since the epoch) down to the
// unit, or up when ceil is set.
func floorNanos(v int64, unit string, ceil bool) int64 {
	var step int64
	switch unit {
	case "MILLISECOND":
		step = types.NanosPerMilli
	case "SECOND":
		step = 1e9
	case "MINUTE":
		step = 60e9
	case "HOUR":
		step = 3600e9
	case "DAY":
		step = types.NanosPerDay
	case "WEEK":
		// Weeks start on Sunday; 1970-01-04 was one.
		off := 3 * types.NanosPerDay
		f := floorDiv(v-off, 7*types.NanosPerDay)*7*types.NanosPerDay + off
		if ceil && f != v {
			f += 7 * types.NanosPerDay
		}
		return f
	default:
		days := floorDiv(v, types.NanosPerDay)
		y, m, _ := types.Date(days).Civil()
		switch unit {
		case "YEAR":
			m = 1
		case "QUARTER":
			m = (m-1)/3*3 + 1
		}
		f := int64(types.DateOf(y, m, 1)) * types.NanosPerDay
		if ceil && f != v {
			months := int64(1)
			switch unit {
			case "YEAR":
				months = 12
			case "QUARTER":
				months = 3
			}
			f = int64(addMonths(types.DateOf(y, m, 1), months)) * types.NanosPerDay
		}
		return f
	}
	f := floorDiv(v, step) * step
	if ceil && f != v {
		f += step
	}
	return f
}

func compileFloorCeil(c *Call, args []*Eval, up bool) (*Eval, error) {
	x := args[0]
	if len(args) == 2 {
		unit, _, _ := constString(c, 1)
		switch x.T.Kind() {
		case types.KindDate:
			f := x.Int
			return &Eval{Int: func(r types.Row) (int64, bool) {
				d, null := f(r)
				return floorNanos(d*types.NanosPerDay, unit, up) / types.NanosPerDay, null
			}}, nil
		case types.KindTime:
			f := x.Int
			return &Eval{Int: func(r types.Row) (int64, bool) {
				t, null := f(r)
				return floorNanos(t, unit, up) % types.NanosPerDay, null
			}}, nil
		}
		f, ltz := x.TS, x.T.Kind() == types.KindTimestampLTZ
		return &Eval{TS: func(r types.Row) (types.Timestamp, bool) {
			ts, null := f(r)
			if null {
				return ts, true
			}
			if ltz {
				ts = ts.ToLocal(Loc)
			}
			v := floorNanos(ts.Millis*types.NanosPerMilli+int64(ts.NanoOfMilli), unit, up)
			out := types.Timestamp{Millis: floorDiv(v, types.NanosPerMilli), NanoOfMilli: int32(v - floorDiv(v, types.NanosPerMilli)*types.NanosPerMilli)}
			if ltz {
				out = out.FromLocal(Loc)
			}
			return out, false
		}}, nil
	}
	switch x.Class() {
	case ClassInt:
		return x, nil
	case ClassFloat:
		f, g := x.Float, math.Floor
		if up {
			g = math.Ceil
		}
		return &Eval{Float: func(r types.Row) (float64, bool) { v, n := f(r); return g(v), n }}, nil
	}
	f := x.Dec
	p, s := c.T.Precision(), c.T.Scale()
	return &Eval{Dec: func(r types.Row) (types.Decimal, bool) {
		v, null := f(r)
		if null {
			return v, true
		}
		t := roundTo(v, 0, true)
		if cmp := v.Cmp(t); up && cmp > 0 || !up && cmp < 0 {
			one := types.DecimalFromInt64(int64(v.Sign()))
			var err error
			if t, err = t.Add(one, types.MaxDecimalPrecision, 0); err != nil {
				failErr(c, err)
			}
		}
		out, err := t.Fit(p, s)
		if err != nil {
			failErr(c, err)
		}
		return out, false
	}}, nil
}

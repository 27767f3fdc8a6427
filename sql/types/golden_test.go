package types

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestGolden runs the data-driven cases of testdata: type strings, casts
// from and to strings, the print form, decimal arithmetic, common types and
// the cast matrix. Each input line is one case and gives one output line.
//
//	type                    a type string -> its summary form
//	cast to=T [tz=Zone]     a text -> ParseValue then FormatValue (CAST round trip)
//	print type=T            a text (CAST form) -> the print connector's form
//	arith                   "T1 v1 op T2 v2" -> result type and value
//	common                  "T1 | T2 | ..." -> CommonType
//	castable                "T1 -> T2" -> implicit / explicit / no
func TestGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/golden", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			for _, line := range strings.Split(strings.TrimRight(d.Input, "\n"), "\n") {
				out.WriteString(runGoldenLine(t, d, line))
				out.WriteByte('\n')
			}
			return out.String()
		})
	})
}

func argType(t *testing.T, d *datadriven.TestData, key string) Type {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			s := strings.Join(a.Vals, ", ")
			s = strings.NewReplacer("INTERVAL_YM", "INTERVAL YEAR TO MONTH", "INTERVAL_DT", "INTERVAL DAY TO SECOND", ":", " ").Replace(s)
			typ, err := ParseType(s)
			if err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
			return typ
		}
	}
	t.Fatalf("%s: missing %s=", d.Pos, key)
	return Type{}
}

func runGoldenLine(t *testing.T, d *datadriven.TestData, line string) string {
	switch d.Cmd {
	case "type":
		typ, err := ParseType(line)
		if err != nil {
			return "error: " + err.Error()
		}
		return typ.String()
	case "cast":
		to := argType(t, d, "to")
		var loc *time.Location
		if d.HasArg("tz") {
			var tz string
			d.ScanArgs(t, "tz", &tz)
			var err error
			if loc, err = time.LoadLocation(tz); err != nil {
				t.Fatal(err)
			}
		}
		v, err := ParseValue(to, line, loc)
		if err != nil {
			return "error: " + err.Error()
		}
		s, err := FormatValue(to, v, loc)
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	case "print":
		typ := argType(t, d, "type")
		var v Value
		if line != "NULL" {
			var err error
			if v, err = ParseValue(typ, line, nil); err != nil {
				return "error: " + err.Error()
			}
		}
		s, err := FormatPrint(typ, v)
		if err != nil {
			return "error: " + err.Error()
		}
		return s
	case "arith":
		f := strings.Fields(line)
		if len(f) != 5 {
			t.Fatalf("%s: want 'T1 v1 op T2 v2', got %q", d.Pos, line)
		}
		nn := strings.NewReplacer("_NN", " NOT NULL")
		t1, t2 := MustParseType(nn.Replace(f[0])), MustParseType(nn.Replace(f[3]))
		ops := map[string]ArithmeticOp{"+": OpAdd, "-": OpSubtract, "*": OpMultiply, "/": OpDivide, "%": OpMod}
		op := ops[f[2]]
		rt, err := ArithmeticType(op, t1, t2)
		if err != nil {
			return "error: " + err.Error()
		}
		if rt.Kind() != KindDecimal {
			return rt.String()
		}
		a, err1 := ParseDecimal(f[1])
		b, err2 := ParseDecimal(f[4])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", d.Pos, err1, err2)
		}
		p, s := rt.Precision(), rt.Scale()
		var r Decimal
		switch op {
		case OpAdd:
			r, err = a.Add(b, p, s)
		case OpSubtract:
			r, err = a.Sub(b, p, s)
		case OpMultiply:
			r, err = a.Mul(b, p, s)
		case OpDivide:
			r, err = a.Div(b, p, s)
		case OpMod:
			r, err = a.Mod(b, p, s)
		}
		if err != nil {
			return fmt.Sprintf("%s error: %v", rt, err)
		}
		return fmt.Sprintf("%s %s", rt, r)
	case "common":
		var ts []Type
		for _, s := range strings.Split(line, "|") {
			ts = append(ts, MustParseType(strings.TrimSpace(s)))
		}
		c, ok := CommonType(ts...)
		if !ok {
			return "none"
		}
		return c.String()
	case "json-decode":
		typ := argType(t, d, "type")
		opts := &JSONOptions{
			FailOnMissingField: d.HasArg("fail-on-missing"),
			IgnoreParseErrors:  d.HasArg("ignore-parse-errors"),
		}
		if d.HasArg("iso") {
			opts.TimestampFormat = JSONTimestampISO8601
		}
		dec, err := NewJSONDecoder(typ.Row(), nil, opts)
		if err != nil {
			return "error: " + err.Error()
		}
		r, err := dec.Decode([]byte(line))
		if err != nil {
			return "error: " + err.Error()
		}
		return FormatRow(typ.Row(), r)
	case "json-encode":
		// Decode, then encode what was decoded.
		typ := argType(t, d, "type")
		dec, err := NewJSONDecoder(typ.Row(), nil, nil)
		if err != nil {
			return "error: " + err.Error()
		}
		r, err := dec.Decode([]byte(line))
		if err != nil {
			return "error: " + err.Error()
		}
		b, err := AppendJSON(nil, typ.Row(), r, nil)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(b)
	case "castable":
		parts := strings.Split(line, "->")
		from, to := MustParseType(strings.TrimSpace(parts[0])), MustParseType(strings.TrimSpace(parts[1]))
		switch {
		case SupportsImplicitCast(from, to):
			return "implicit"
		case SupportsExplicitCast(from, to) && CastCanFail(from, to):
			return "explicit, can fail"
		case SupportsExplicitCast(from, to):
			return "explicit"
		}
		return "no"
	}
	t.Fatalf("%s: unknown command %s", d.Pos, d.Cmd)
	return ""
}

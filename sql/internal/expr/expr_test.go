package expr_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// rowScope resolves the columns of one row type.
type rowScope struct{ rt *types.RowType }

func (s rowScope) Column(parts []string) (expr.Expr, int, error) {
	i, err := s.rt.Lookup(parts[0])
	if err != nil {
		return nil, 0, err
	}
	f := s.rt.Field(i)
	return &expr.Column{Index: i, Name: f.Name, T: f.Type}, 1, nil
}

// TestEval runs the scripts of testdata: "schema" sets the columns (a
// ROW type's fields, "a BIGINT, b STRING"), "row" the values of the row
// (their text as CAST from a string reads it, separated by "|", "null" for
// NULL), and "eval" evaluates each line of its input as an expression,
// printing its type and value, or the error.
func TestEval(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		rt := types.MustRowType()
		row := types.Row{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "schema":
				typ, err := types.ParseType("ROW<" + strings.TrimSpace(d.Input) + ">")
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				rt = typ.Row()
				return ""
			case "row":
				r, err := buildRow(rt, strings.Split(d.Input, "|"))
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				row = r
				return ""
			case "eval":
				var out strings.Builder
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					out.WriteString(evalLine(rt, row, line))
				}
				return out.String()
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// buildRow builds a row of type rt from the text of its fields; a ROW
// field is written (a, b, ...).
func buildRow(rt *types.RowType, parts []string) (types.Row, error) {
	arena := types.NewArena(0)
	w := types.NewRowWriter(rt, arena)
	if len(parts) != rt.Len() {
		return types.Row{}, fmt.Errorf("%d values for %d columns", len(parts), rt.Len())
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		switch ft := rt.FieldType(i); {
		case p == "null":
			w.SetNull(i)
		case ft.Kind() == types.KindRow && strings.HasPrefix(p, "("):
			nested, err := buildRow(ft.Row(), strings.Split(strings.Trim(p, "()"), ","))
			if err != nil {
				return types.Row{}, err
			}
			w.SetRow(i, nested)
		default:
			if err := w.ParseText(i, p, nil); err != nil {
				return types.Row{}, fmt.Errorf("column %d: %w", i, err)
			}
		}
	}
	return w.Finish(), nil
}

func evalLine(rt *types.RowType, row types.Row, src string) string {
	n, err := parser.ParseExpr(src)
	if err != nil {
		return "error: " + firstLine(err) + "\n"
	}
	a := &expr.Analyzer{Src: src, Scope: rowScope{rt}, Funcs: expr.Builtins()}
	e, err := a.Expr(n)
	if err != nil {
		return "error: " + firstLine(err) + "\n"
	}
	ev, err := expr.Compile(e)
	if err != nil {
		return "error: " + firstLine(err) + "\n"
	}
	var v types.Value
	if err := expr.Catch(func() { v = ev.Boxed()(row) }); err != nil {
		return fmt.Sprintf("%s: error: %v\n", e.Type(), err)
	}
	if v == nil {
		return fmt.Sprintf("%s: NULL\n", e.Type())
	}
	s, err := types.FormatValue(e.Type(), v, nil)
	if err != nil {
		return fmt.Sprintf("%s: format error %v\n", e.Type(), err)
	}
	return fmt.Sprintf("%s: %s\n", e.Type(), s)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

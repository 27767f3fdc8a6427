package expr

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// Scope resolves the column references of an expression.
type Scope interface {
	// Column resolves a reference written as parts (a, t.a, t.a.b). It
	// returns the column and how many parts name it; the parts after those
	// are fields of a ROW column. Its error names the columns in scope.
	Column(parts []string) (e Expr, used int, err error)
}

// Analyzer resolves the syntax of expressions into typed Exprs.
type Analyzer struct {
	// Src is the SQL text, for errors with a caret.
	Src   string
	Scope Scope
	Funcs *Registry
	// Call, if set, is asked first about every function call: aggregates,
	// window functions and the calls that only a query clause allows. If
	// handled is false the call is a scalar function of Funcs.
	Call func(c *parser.FuncCall) (e Expr, handled bool, err error)
	// Subquery, if set, resolves the subqueries of an expression (scalar
	// subqueries, EXISTS and IN (SELECT ...)), which the planner turns into
	// joins, or refuses them where they are not supported.
	Subquery func(n parser.Expr) (Expr, error)
}

// Errorf returns an error at pos in the SQL text.
func (a *Analyzer) Errorf(pos parser.Pos, format string, args ...any) error {
	return parser.ErrorAt(a.Src, pos, fmt.Sprintf(format, args...))
}

func (a *Analyzer) wrap(pos parser.Pos, err error) error {
	var pe *parser.Error
	if errors.As(err, &pe) {
		return err
	}
	return parser.ErrorAt(a.Src, pos, err.Error())
}

// Expr resolves n.
func (a *Analyzer) Expr(n parser.Expr) (Expr, error) {
	switch n := n.(type) {
	case *parser.Ref:
		return a.ref(n)
	case *parser.NumberLit:
		l, err := NumberLiteral(n.Text)
		if err != nil {
			return nil, a.wrap(n.Pos, err)
		}
		return l, nil
	case *parser.StringLit:
		return StringLiteral(n.Value), nil
	case *parser.BinaryLit:
		b, err := parseHex(n.Hex)
		if err != nil {
			return nil, a.Errorf(n.Pos, "bad binary literal X'%s': %v", n.Hex, err)
		}
		return &Literal{V: b, T: types.Binary(max(len(b), 1)).NotNull(), Text: "X'" + n.Hex + "'"}, nil
	case *parser.BoolLit:
		return &Literal{V: n.Value, T: types.Boolean().NotNull(), Text: strings.ToUpper(strconv.FormatBool(n.Value))}, nil
	case *parser.NullLit:
		return &Literal{T: types.NullType(), Text: "NULL"}, nil
	case *parser.UnknownLit:
		return &Literal{T: types.Boolean().Nullable(), Text: "UNKNOWN"}, nil
	case *parser.TypedLit:
		return a.typedLiteral(n)
	case *parser.IntervalLit:
		return a.intervalLiteral(n)
	case *parser.Unary:
		return a.unary(n)
	case *parser.Binary:
		return a.binary(n)
	case *parser.IsExpr:
		x, err := a.Expr(n.X)
		if err != nil {
			return nil, err
		}
		what := n.What
		if strings.HasPrefix(what, "JSON") {
			return a.callNamed(n.Pos, "IS "+what, []Expr{x}, n.Not)
		}
		op := "IS "
		if n.Not {
			op += "NOT "
		}
		return a.call(n.Pos, op+what, x)
	case *parser.DistinctFrom:
		l, r, err := a.pair(n.L, n.R)
		if err != nil {
			return nil, err
		}
		op := "IS DISTINCT FROM"
		if n.Not {
			op = "IS NOT DISTINCT FROM"
		}
		return a.call(n.Pos, op, l, r)
	case *parser.Between:
		return a.between(n)
	case *parser.InList:
		return a.inList(n)
	case *parser.Like:
		args := []parser.Expr{n.X, n.Pattern}
		if n.Escape != nil {
			args = append(args, n.Escape)
		}
		es, err := a.exprs(args)
		if err != nil {
			return nil, err
		}
		return a.callNamed(n.Pos, n.Op, es, n.Not)
	case *parser.Case:
		return a.caseExpr(n)
	case *parser.Cast:
		return a.cast(n)
	case *parser.FuncCall:
		return a.funcCall(n)
	case *parser.Extract:
		x, err := a.Expr(n.X)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "EXTRACT", StringLiteral(n.Unit), x)
	case *parser.Trim:
		spec := n.Spec
		if spec == "" {
			spec = "BOTH"
		}
		var chars Expr = StringLiteral(" ")
		if n.Chars != nil {
			c, err := a.Expr(n.Chars)
			if err != nil {
				return nil, err
			}
			chars = c
		}
		x, err := a.Expr(n.X)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "TRIM", StringLiteral(spec), chars, x)
	case *parser.TimeUnit:
		return StringLiteral(n.Unit), nil
	case *parser.RowExpr:
		es, err := a.exprs(n.Fields)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "ROW", es...)
	case *parser.ArrayExpr:
		es, err := a.exprs(n.Elems)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "ARRAY", es...)
	case *parser.MapExpr:
		es, err := a.exprs(n.Elems)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "MAP", es...)
	case *parser.Index:
		x, i, err := a.pair(n.X, n.Index)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "ITEM", x, i)
	case *parser.FieldAccess:
		x, err := a.Expr(n.X)
		if err != nil {
			return nil, err
		}
		return a.field(n.Pos, x, n.Field.Name)
	case *parser.JSONFunc:
		return a.jsonFunc(n)
	case *parser.Subquery, *parser.Exists, *parser.InQuery:
		if a.Subquery != nil {
			return a.Subquery(n)
		}
		return nil, a.Errorf(n.Position(), "a subquery is not supported here: eddy plans IN and EXISTS subqueries of a WHERE clause as joins; write other subqueries as joins")
	case *parser.Param:
		return nil, a.Errorf(n.Pos, "parameters (?) are not supported in a script")
	case *parser.Descriptor, *parser.TableArg, *parser.NamedArg:
		return nil, a.Errorf(n.Position(), "%s is only an argument of a table function such as TUMBLE", n)
	}
	return nil, a.Errorf(n.Position(), "unsupported expression %s", n)
}

func (a *Analyzer) exprs(ns []parser.Expr) ([]Expr, error) {
	out := make([]Expr, len(ns))
	for i, n := range ns {
		e, err := a.Expr(n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (a *Analyzer) pair(l, r parser.Expr) (Expr, Expr, error) {
	x, err := a.Expr(l)
	if err != nil {
		return nil, nil, err
	}
	y, err := a.Expr(r)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// call resolves a call of the registered function name.
func (a *Analyzer) call(pos parser.Pos, name string, args ...Expr) (Expr, error) {
	b, ok := a.Funcs.Lookup(name)
	if !ok {
		return nil, a.Errorf(pos, "unknown function %s", name)
	}
	e, err := NewCall(b, args...)
	if err != nil {
		return nil, a.wrap(pos, err)
	}
	return e, nil
}

// callNamed resolves a call and negates it when not is set.
func (a *Analyzer) callNamed(pos parser.Pos, name string, args []Expr, not bool) (Expr, error) {
	e, err := a.call(pos, name, args...)
	if err != nil || !not {
		return e, err
	}
	return a.call(pos, "NOT", e)
}

func (a *Analyzer) ref(n *parser.Ref) (Expr, error) {
	parts := make([]string, len(n.Parts))
	for i, p := range n.Parts {
		parts[i] = p.Name
	}
	if a.Scope == nil {
		return nil, a.Errorf(n.Pos, "column %s: no columns are in scope here", n)
	}
	e, used, err := a.Scope.Column(parts)
	if err != nil {
		return nil, a.wrap(n.Pos, err)
	}
	for _, p := range n.Parts[used:] {
		if e, err = a.field(p.Pos, e, p.Name); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// field resolves x.name on a ROW value.
func (a *Analyzer) field(pos parser.Pos, x Expr, name string) (Expr, error) {
	t := x.Type()
	if t.Kind() != types.KindRow {
		return nil, a.Errorf(pos, "%s is of type %s, not a ROW: it has no field %s", x, t, name)
	}
	rt := t.Row()
	i, err := rt.Lookup(name)
	if err != nil {
		return nil, a.wrap(pos, err)
	}
	ft := rt.FieldType(i)
	if t.IsNullable() {
		ft = ft.Nullable()
	}
	return &Field{X: x, Index: i, Name: rt.Field(i).Name, T: ft}, nil
}

// NumberLiteral types a numeric literal as Flink does: an integer is an
// INT, or a BIGINT if it does not fit, or a DECIMAL beyond; a number with
// a point is an exact DECIMAL; one with an exponent is a DOUBLE.
func NumberLiteral(text string) (*Literal, error) {
	if strings.ContainsAny(text, "eE") {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %s: %w", text, err)
		}
		return &Literal{V: f, T: types.Double().NotNull(), Text: text}, nil
	}
	if !strings.Contains(text, ".") {
		if v, err := strconv.ParseInt(text, 10, 64); err == nil {
			if v >= -1<<31 && v < 1<<31 {
				return &Literal{V: int32(v), T: types.Int().NotNull(), Text: text}, nil
			}
			return &Literal{V: v, T: types.BigInt().NotNull(), Text: text}, nil
		}
	}
	d, err := types.ParseDecimal(text)
	if err != nil {
		return nil, fmt.Errorf("bad number %s: %w", text, err)
	}
	p, s := d.Digits(), d.Scale()
	if p < s {
		p = s
	}
	if p == 0 {
		p = 1
	}
	if p > types.MaxDecimalPrecision {
		return nil, fmt.Errorf("number %s has more than %d digits", text, types.MaxDecimalPrecision)
	}
	return &Literal{V: d, T: types.DecimalType(p, s).NotNull(), Text: text}, nil
}

// StringLiteral is a character string constant, of type CHAR(n) NOT NULL
// as in Flink.
func StringLiteral(s string) *Literal {
	n := 0
	for range s {
		n++
	}
	t := types.Char(max(n, 1))
	if n == 0 {
		t = types.VarChar(1)
	}
	return &Literal{V: s, T: t.NotNull(), Text: "'" + strings.ReplaceAll(s, "'", "''") + "'"}
}

func parseHex(h string) ([]byte, error) {
	if len(h)%2 != 0 {
		return nil, fmt.Errorf("an odd number of hexadecimal digits")
	}
	b, ok := new(big.Int).SetString("1"+h, 16)
	if !ok && h != "" {
		return nil, fmt.Errorf("not hexadecimal")
	}
	if h == "" {
		return []byte{}, nil
	}
	return b.Bytes()[1:], nil
}

func (a *Analyzer) typedLiteral(n *parser.TypedLit) (Expr, error) {
	text := n.Type + " '" + n.Value + "'"
	switch n.Type {
	case "DATE":
		d, err := types.ParseDate(n.Value)
		if err != nil {
			return nil, a.wrap(n.Pos, err)
		}
		return &Literal{V: d, T: types.DateType().NotNull(), Text: text}, nil
	case "TIME":
		p := fractionDigits(n.Value)
		t, err := types.ParseTime(n.Value, p)
		if err != nil {
			return nil, a.wrap(n.Pos, err)
		}
		return &Literal{V: t, T: types.TimeType(p).NotNull(), Text: text}, nil
	case "TIMESTAMP":
		p := fractionDigits(n.Value)
		ts, err := types.ParseTimestamp(n.Value, p)
		if err != nil {
			return nil, a.wrap(n.Pos, err)
		}
		return &Literal{V: ts, T: types.TimestampType(p).NotNull(), Text: text}, nil
	}
	return nil, a.Errorf(n.Pos, "unknown literal type %s", n.Type)
}

// fractionDigits returns the digits after the point of the seconds of a
// time text: the precision of a TIME or TIMESTAMP literal.
func fractionDigits(s string) int {
	i := strings.LastIndexByte(s, '.')
	if i < 0 || i < strings.LastIndexByte(s, ':') {
		return 0
	}
	return min(len(strings.TrimSpace(s[i+1:])), types.MaxTimePrecision)
}

var intervalUnits = map[string]types.IntervalUnit{
	"YEAR": types.Year, "MONTH": types.Month, "DAY": types.Day,
	"HOUR": types.Hour, "MINUTE": types.Minute, "SECOND": types.Second,
}

func (a *Analyzer) intervalLiteral(n *parser.IntervalLit) (Expr, error) {
	q := n.Qualifier
	from, ok := intervalUnits[q.Start]
	scale := int64(1)
	if !ok {
		switch q.Start {
		case "QUARTER":
			from, scale = types.Month, 3
		case "WEEK":
			from, scale = types.Day, 7
		default:
			return nil, a.Errorf(q.Pos, "unknown interval unit %s", q.Start)
		}
	}
	to := from
	if q.End != "" {
		if to, ok = intervalUnits[q.End]; !ok {
			return nil, a.Errorf(q.Pos, "unknown interval unit %s", q.End)
		}
	}
	v, t, err := types.ParseInterval(n.Value, from, to)
	if err != nil {
		return nil, a.wrap(n.Pos, err)
	}
	v *= scale
	if n.Negative {
		v = -v
	}
	var val types.Value = v
	if t.Kind() == types.KindIntervalYearMonth {
		val = int32(v)
	}
	return &Literal{V: val, T: t.NotNull(), Text: n.String()}, nil
}

func (a *Analyzer) unary(n *parser.Unary) (Expr, error) {
	if n.Op == "-" {
		if num, ok := n.X.(*parser.NumberLit); ok {
			l, err := NumberLiteral("-" + num.Text)
			if err != nil {
				return nil, a.wrap(n.Pos, err)
			}
			return l, nil
		}
	}
	x, err := a.Expr(n.X)
	if err != nil {
		return nil, err
	}
	switch n.Op {
	case "-":
		return a.call(n.Pos, "NEGATE", x)
	case "+":
		if !x.Type().IsNumeric() && !x.Type().IsInterval() {
			return nil, a.Errorf(n.Pos, "cannot apply + to %s: it takes a number or an interval", x.Type())
		}
		return x, nil
	}
	return a.call(n.Pos, "NOT", x)
}

func (a *Analyzer) binary(n *parser.Binary) (Expr, error) {
	l, r, err := a.pair(n.L, n.R)
	if err != nil {
		return nil, err
	}
	op := n.Op
	if op == "!=" {
		op = "<>"
	}
	return a.call(n.Pos, op, l, r)
}

func (a *Analyzer) between(n *parser.Between) (Expr, error) {
	x, err := a.Expr(n.X)
	if err != nil {
		return nil, err
	}
	lo, hi, err := a.pair(n.Low, n.High)
	if err != nil {
		return nil, err
	}
	in := func(lo, hi Expr) (Expr, error) {
		ge, err := a.call(n.Pos, ">=", x, lo)
		if err != nil {
			return nil, err
		}
		le, err := a.call(n.Pos, "<=", x, hi)
		if err != nil {
			return nil, err
		}
		return a.call(n.Pos, "AND", ge, le)
	}
	e, err := in(lo, hi)
	if err == nil && n.Symmetric {
		var f Expr
		if f, err = in(hi, lo); err == nil {
			e, err = a.call(n.Pos, "OR", e, f)
		}
	}
	if err != nil || !n.Not {
		return e, err
	}
	return a.call(n.Pos, "NOT", e)
}

func (a *Analyzer) inList(n *parser.InList) (Expr, error) {
	x, err := a.Expr(n.X)
	if err != nil {
		return nil, err
	}
	var e Expr
	for _, item := range n.List {
		v, err := a.Expr(item)
		if err != nil {
			return nil, err
		}
		eq, err := a.call(item.Position(), "=", x, v)
		if err != nil {
			return nil, err
		}
		if e == nil {
			e = eq
		} else if e, err = a.call(n.Pos, "OR", e, eq); err != nil {
			return nil, err
		}
	}
	if !n.Not {
		return e, nil
	}
	return a.call(n.Pos, "NOT", e)
}

func (a *Analyzer) caseExpr(n *parser.Case) (Expr, error) {
	var operand Expr
	if n.Operand != nil {
		var err error
		if operand, err = a.Expr(n.Operand); err != nil {
			return nil, err
		}
	}
	c := &Case{}
	results := make([]Expr, 0, len(n.Whens)+1)
	for _, w := range n.Whens {
		cond, err := a.Expr(w.Cond)
		if err != nil {
			return nil, err
		}
		if operand != nil {
			if cond, err = a.call(w.Pos, "=", operand, cond); err != nil {
				return nil, err
			}
		} else if !isBoolish(cond.Type()) {
			return nil, a.Errorf(w.Cond.Position(), "the condition of WHEN is of type %s, not BOOLEAN", cond.Type())
		}
		res, err := a.Expr(w.Result)
		if err != nil {
			return nil, err
		}
		c.Whens = append(c.Whens, When{Cond: ImplicitCast(cond, types.Boolean().WithNullability(cond.Type().IsNullable())), Result: res})
		results = append(results, res)
	}
	if n.Else != nil {
		e, err := a.Expr(n.Else)
		if err != nil {
			return nil, err
		}
		c.Else = e
		results = append(results, e)
	}
	ts := make([]types.Type, len(results))
	nullable := n.Else == nil
	for i, r := range results {
		ts[i] = r.Type()
		nullable = nullable || r.Type().IsNullable()
	}
	t, ok := types.CommonType(ts...)
	if !ok {
		return nil, a.Errorf(n.Pos, "the results of CASE have no common type: %s", typeList(ts))
	}
	if t.Kind() == types.KindNull {
		t = types.Boolean()
	}
	t = t.WithNullability(nullable)
	c.T = t
	for i := range c.Whens {
		c.Whens[i].Result = ImplicitCast(c.Whens[i].Result, t)
	}
	if c.Else != nil {
		c.Else = ImplicitCast(c.Else, t)
	}
	return c, nil
}

func typeList(ts []types.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// Type resolves a data type as written (VARCHAR and VARBINARY without a
// length are the longest, as in Flink's SQL).
func (a *Analyzer) Type(t *parser.Type) (types.Type, error) {
	rt, err := types.ParseType(sqlLengths(t).String())
	if err != nil {
		return types.Type{}, a.wrap(t.Pos, err)
	}
	return rt, nil
}

func (a *Analyzer) cast(n *parser.Cast) (Expr, error) {
	x, err := a.Expr(n.X)
	if err != nil {
		return nil, err
	}
	t, err := a.Type(n.Type)
	if err != nil {
		return nil, err
	}
	if !types.SupportsExplicitCast(x.Type(), t) {
		return nil, a.Errorf(n.Pos, "cannot cast %s of type %s to %s", x, x.Type(), t)
	}
	return &Cast{X: x, T: types.CastType(x.Type(), t, n.Try), Try: n.Try}, nil
}

func (a *Analyzer) funcCall(n *parser.FuncCall) (Expr, error) {
	if a.Call != nil {
		e, handled, err := a.Call(n)
		if handled || err != nil {
			return e, err
		}
	}
	name := strings.ToUpper(n.Name.Last().Name)
	switch {
	case n.Star:
		return nil, a.Errorf(n.Pos, "%s(*) is only allowed for COUNT in a query's SELECT or HAVING", name)
	case n.Over != nil || n.OverName != nil:
		return nil, a.Errorf(n.Pos, "%s with OVER is only allowed in a query's SELECT", name)
	case n.Distinct || n.Filter != nil:
		return nil, a.Errorf(n.Pos, "DISTINCT and FILTER are only allowed in aggregate functions")
	}
	b, ok := a.Funcs.Lookup(name)
	if !ok {
		return nil, a.Errorf(n.Name.Pos, "unknown function %s (SHOW FUNCTIONS lists them; CREATE FUNCTION binds one registered in Go)", n.Name)
	}
	args, err := a.exprs(n.Args)
	if err != nil {
		return nil, err
	}
	e, err := NewCall(b, args...)
	if err != nil {
		return nil, a.wrap(n.Pos, err)
	}
	return e, nil
}

// jsonFunc resolves the JSON functions with clauses of their own into
// calls with the clauses as trailing constant arguments:
//
//	JSON_VALUE(v, path, NULL of the RETURNING type (STRING by default),
//	    on-empty 'NULL'|'ERROR'|'DEFAULT', its default, on-error kind, its default)
//	JSON_QUERY(v, path, 'WITHOUT'|'CONDITIONAL'|'UNCONDITIONAL', on-empty, on-error)
//	JSON_EXISTS(v, path, on-error 'FALSE'|'TRUE'|'UNKNOWN'|'ERROR')
//	JSON_OBJECT('NULL'|'ABSENT', key1, value1, ...)
//	JSON_ARRAY('ABSENT'|'NULL', value1, ...)
func (a *Analyzer) jsonFunc(n *parser.JSONFunc) (Expr, error) {
	if call, ok := JSONAggregateCall(n); ok {
		if len(n.OrderBy) > 0 {
			return nil, a.Errorf(n.Pos, "%s ... ORDER BY is not supported: the values are in arrival order", n.Name)
		}
		return a.funcCall(call)
	}
	b, ok := a.Funcs.Lookup(n.Name)
	if !ok {
		return nil, a.Errorf(n.Pos, "%s is not supported", n.Name)
	}
	args, err := a.exprs(n.Args)
	if err != nil {
		return nil, err
	}
	null := func() Expr { return &Literal{T: types.NullType(), Text: "NULL"} }
	behavior := func(bh *parser.JSONBehavior, def string) (Expr, Expr, error) {
		if bh == nil {
			return StringLiteral(def), null(), nil
		}
		if bh.Default != nil {
			d, err := a.Expr(bh.Default)
			return StringLiteral("DEFAULT"), d, err
		}
		return StringLiteral(bh.Kind), null(), nil
	}
	switch n.Name {
	case "JSON_VALUE":
		ret := types.String().Nullable()
		if n.Returning != nil {
			t, err := a.Type(n.Returning)
			if err != nil {
				return nil, err
			}
			ret = t.Nullable()
		}
		ek, ed, err := behavior(n.OnEmpty, "NULL")
		if err != nil {
			return nil, err
		}
		rk, rd, err := behavior(n.OnError, "NULL")
		if err != nil {
			return nil, err
		}
		args = append(args, &Literal{T: ret, Text: "NULL"}, ek, ed, rk, rd)
	case "JSON_QUERY":
		if n.Returning != nil {
			t, err := a.Type(n.Returning)
			if err != nil {
				return nil, err
			}
			if !t.IsString() {
				return nil, a.Errorf(n.Returning.Pos, "JSON_QUERY returns a string, not %s", t)
			}
		}
		wrapper := "WITHOUT"
		switch {
		case strings.Contains(n.Wrapper, "UNCONDITIONAL"):
			wrapper = "UNCONDITIONAL"
		case strings.HasPrefix(n.Wrapper, "WITH "):
			wrapper = "CONDITIONAL"
		}
		ek, _, _ := behavior(n.OnEmpty, "NULL")
		rk, _, _ := behavior(n.OnError, "NULL")
		args = append(args, StringLiteral(wrapper), ek, rk)
	case "JSON_EXISTS":
		rk, _, _ := behavior(n.OnError, "FALSE")
		args = append(args, rk)
	case "JSON_OBJECT", "JSON_ARRAY":
		onNull := n.OnNull
		if onNull == "" {
			onNull = map[bool]string{true: "NULL", false: "ABSENT"}[n.Name == "JSON_OBJECT"]
		}
		args = append([]Expr{StringLiteral(onNull)}, args...)
		for _, p := range n.Pairs {
			k, v, err := a.pair(p.Key, p.Value)
			if err != nil {
				return nil, err
			}
			args = append(args, k, v)
		}
	default:
		return nil, a.Errorf(n.Pos, "%s is only allowed in a query's SELECT or HAVING", n.Name)
	}
	e, err := NewCall(b, args...)
	if err != nil {
		return nil, a.wrap(n.Pos, err)
	}
	return e, nil
}

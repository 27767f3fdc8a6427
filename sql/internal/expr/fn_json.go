package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/sql/types"
)

// The JSON functions: IS JSON, JSON_EXISTS, JSON_VALUE, JSON_QUERY with
// SQL/JSON paths ('$.a.b[0]', lax or strict), and JSON_STRING, JSON_OBJECT
// and JSON_ARRAY, which write JSON text as Flink does (compact, members in
// order).
func init() {
	for _, what := range []string{"JSON", "JSON VALUE", "JSON SCALAR", "JSON ARRAY", "JSON OBJECT"} {
		what := what
		register(&Builtin{
			Name: "IS " + what,
			Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
				if len(args) != 1 || !famText.accepts(args[0]) {
					return types.Type{}, nil, &ArgError{"IS " + what, args, "a string"}
				}
				return types.Boolean().NotNull(), []types.Type{famText.cast(args[0])}, nil
			},
			Func: &Func{Postfix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
				x := args[0].Str
				return &Eval{Bool: func(r types.Row) (bool, bool) {
					s, null := x(r)
					if null {
						return false, false
					}
					v, err := decodeJSON(s)
					if err != nil {
						return false, false
					}
					switch what {
					case "JSON SCALAR":
						_, isObj := v.(*jsonObject)
						_, isArr := v.([]any)
						return !isObj && !isArr, false
					case "JSON ARRAY":
						_, ok := v.([]any)
						return ok, false
					case "JSON OBJECT":
						_, ok := v.(*jsonObject)
						return ok, false
					}
					return true, false
				}}, nil
			}},
			Doc: "string IS " + what + ": whether string is valid JSON" + map[string]string{
				"JSON": "", "JSON VALUE": "", "JSON SCALAR": " and a scalar", "JSON ARRAY": " and an array", "JSON OBJECT": " and an object"}[what] +
				"; FALSE for NULL",
		})
	}
	register(&Builtin{
		Name: "JSON_EXISTS",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) < 2 || len(args) > 3 || !famText.accepts(args[0]) || !famStr.accepts(args[1]) {
				return types.Type{}, nil, &ArgError{"JSON_EXISTS", args, "(json STRING, path STRING [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])"}
			}
			return types.Boolean().Nullable(), sigOf(famText, famStr, famStr).casts(args), nil
		},
		Func:  &Func{Compile: compileJSONExists},
		Check: checkJSONPath,
		Doc:   "JSON_EXISTS(json, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR]): whether the SQL/JSON path finds something in json; FALSE ON ERROR by default",
	})
	register(&Builtin{
		Name: "JSON_VALUE",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			want := "(json STRING, path STRING [RETURNING type] [{NULL | ERROR | DEFAULT value} ON EMPTY] [{NULL | ERROR | DEFAULT value} ON ERROR])"
			if len(args) != 2 && len(args) != 3 && len(args) != 7 || !famText.accepts(args[0]) || !famStr.accepts(args[1]) {
				return types.Type{}, nil, &ArgError{"JSON_VALUE", args, want}
			}
			ret := types.String().Nullable()
			if len(args) >= 3 && args[2].Kind() != types.KindNull {
				ret = args[2].Nullable()
			}
			switch {
			case ret.IsString(), ret.Kind() == types.KindBoolean, ret.IsNumeric():
			default:
				return types.Type{}, nil, &ArgError{"JSON_VALUE", args, "RETURNING a string, BOOLEAN or numeric type"}
			}
			casts := sigOf(famText, famStr, famAny, famStr, famAny, famStr, famAny).casts(args)
			if len(args) >= 3 {
				casts[2] = ret
			}
			if len(args) == 7 {
				casts[4], casts[6] = ret, ret
			}
			return ret, casts, nil
		},
		Func:  &Func{Compile: compileJSONValue},
		Check: checkJSONPath,
		Doc:   "JSON_VALUE(json, path [RETURNING type] [{NULL | ERROR | DEFAULT value} ON EMPTY] [{NULL | ERROR | DEFAULT value} ON ERROR]): the scalar the SQL/JSON path finds in json, as a STRING or the RETURNING type (BOOLEAN, numbers); NULL ON EMPTY and NULL ON ERROR by default",
	})
	register(&Builtin{
		Name: "JSON_QUERY",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 && len(args) != 5 || !famText.accepts(args[0]) || !famStr.accepts(args[1]) {
				return types.Type{}, nil, &ArgError{"JSON_QUERY", args, "(json STRING, path STRING [wrapper] [behavior ON EMPTY] [behavior ON ERROR])"}
			}
			return types.String().Nullable(), sigOf(famText, famStr, famStr, famStr, famStr).casts(args), nil
		},
		Func:  &Func{Compile: compileJSONQuery},
		Check: checkJSONPath,
		Doc:   "JSON_QUERY(json, path [{WITHOUT | WITH [CONDITIONAL | UNCONDITIONAL]} [ARRAY] WRAPPER] [{NULL | EMPTY ARRAY | EMPTY OBJECT | ERROR} ON EMPTY] [same ON ERROR]): the JSON text of the object or array the SQL/JSON path finds in json, wrapped into an array as asked; NULL ON EMPTY and NULL ON ERROR by default",
	})
	register(&Builtin{
		Name: "JSON_STRING",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 1 {
				return types.Type{}, nil, &ArgError{"JSON_STRING", args, "one value"}
			}
			return nullableIfAny(types.String(), args), nil, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			w := jsonWriter(args[0], c.Args[0])
			isNull := args[0].IsNull()
			var buf []byte
			return &Eval{Str: func(r types.Row) (string, bool) {
				if isNull(r) {
					return "", true
				}
				buf = w(buf[:0], r)
				return string(buf), false
			}}, nil
		}},
		Doc: "JSON_STRING(value): value as JSON text; NULL for NULL",
	})
	register(&Builtin{
		Name: "JSON_OBJECT",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 0 || len(args)%2 != 1 {
				return types.Type{}, nil, &ArgError{"JSON_OBJECT", args, "([KEY] key VALUE value, ... [{NULL | ABSENT} ON NULL])"}
			}
			for i := 1; i < len(args); i += 2 {
				if !famStr.accepts(args[i]) {
					return types.Type{}, nil, &ArgError{"JSON_OBJECT", args, "string keys"}
				}
			}
			return types.String().NotNull(), nil, nil
		},
		Func: &Func{Compile: compileJSONObject},
		Doc:  "JSON_OBJECT([KEY] key VALUE value, ... [{NULL | ABSENT} ON NULL]): a JSON object of the pairs; values made by JSON_OBJECT or JSON_ARRAY nest as JSON; NULL ON NULL by default",
	})
	register(&Builtin{
		Name: "JSON_ARRAY",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 0 {
				return types.Type{}, nil, &ArgError{"JSON_ARRAY", args, "(value, ... [{NULL | ABSENT} ON NULL])"}
			}
			return types.String().NotNull(), nil, nil
		},
		Func: &Func{Compile: compileJSONArray},
		Doc:  "JSON_ARRAY(value, ... [{NULL | ABSENT} ON NULL]): a JSON array of the values; values made by JSON_OBJECT or JSON_ARRAY nest as JSON; ABSENT ON NULL by default",
	})
}

// jsonObject is a decoded JSON object with its members in order.
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) (any, bool) {
	for i := len(o.keys) - 1; i >= 0; i-- {
		if o.keys[i] == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// decodeJSON decodes one JSON value: *jsonObject, []any, string,
// json.Number, bool or nil.
func decodeJSON(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("text after the JSON value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &jsonObject{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return t, nil
}

// encodeJSON appends v as compact JSON text.
func encodeJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case json.Number:
		return append(b, v...)
	case string:
		return appendJSONString(b, v)
	case []any:
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = encodeJSON(b, x)
		}
		return append(b, ']')
	case *jsonObject:
		b = append(b, '{')
		for i, k := range v.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = encodeJSON(b, v.vals[i])
		}
		return append(b, '}')
	}
	return b
}

func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
}

// jsonPath is a compiled SQL/JSON path: $ then members, indexes and
// wildcards, in lax or strict mode.
type jsonPath struct {
	strict bool
	steps  []pathStep
}

type pathStep struct {
	key   string
	index int
	kind  byte // '.' member, '[' index, '*' any member or element
}

func parseJSONPath(p string) (*jsonPath, error) {
	jp := &jsonPath{}
	s := strings.TrimSpace(p)
	bad := func(why string) (*jsonPath, error) {
		return nil, fmt.Errorf("bad JSON path %q: %s", p, why)
	}
	if rest, ok := strings.CutPrefix(s, "strict "); ok {
		jp.strict, s = true, strings.TrimSpace(rest)
	} else if rest, ok := strings.CutPrefix(s, "lax "); ok {
		s = strings.TrimSpace(rest)
	}
	if !strings.HasPrefix(s, "$") {
		return bad("it must start with $")
	}
	s = s[1:]
	for s != "" {
		switch {
		case strings.HasPrefix(s, ".*"):
			jp.steps = append(jp.steps, pathStep{kind: '*'})
			s = s[2:]
		case strings.HasPrefix(s, "[*]"):
			jp.steps = append(jp.steps, pathStep{kind: '*'})
			s = s[3:]
		case strings.HasPrefix(s, ".\"") || strings.HasPrefix(s, "[\"") || strings.HasPrefix(s, "['") || strings.HasPrefix(s, ".[\"") || strings.HasPrefix(s, ".['"):
			s = strings.TrimPrefix(s, ".")
			bracket := s[0] == '['
			if bracket {
				s = s[1:]
			}
			q := s[0]
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				return bad("a quote is not closed")
			}
			jp.steps = append(jp.steps, pathStep{kind: '.', key: s[1 : 1+end]})
			s = s[end+2:]
			if bracket {
				if !strings.HasPrefix(s, "]") {
					return bad("] expected")
				}
				s = s[1:]
			}
		case strings.HasPrefix(s, "."):
			s = s[1:]
			i := strings.IndexAny(s, ".[ ")
			if i < 0 {
				i = len(s)
			}
			if i == 0 {
				return bad("a member name expected after .")
			}
			jp.steps = append(jp.steps, pathStep{kind: '.', key: s[:i]})
			s = s[i:]
		case strings.HasPrefix(s, "["):
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return bad("] expected")
			}
			n, err := strconv.Atoi(strings.TrimSpace(s[1:end]))
			if err != nil || n < 0 {
				return bad("an array index must be a number from 0")
			}
			jp.steps = append(jp.steps, pathStep{kind: '[', index: n})
			s = s[end+1:]
		default:
			return bad("unexpected " + strconv.Quote(s))
		}
	}
	return jp, nil
}

// eval applies the path: found is false for an empty result; a wildcard or
// a lax member step over an array gives an array of the results.
func (jp *jsonPath) eval(v any) (res any, found bool, err error) {
	return jp.apply(v, jp.steps)
}

func (jp *jsonPath) apply(v any, steps []pathStep) (any, bool, error) {
	if len(steps) == 0 {
		return v, true, nil
	}
	st := steps[0]
	switch st.kind {
	case '.':
		switch x := v.(type) {
		case *jsonObject:
			m, ok := x.get(st.key)
			if !ok {
				if jp.strict {
					return nil, false, fmt.Errorf("no member %q", st.key)
				}
				return nil, false, nil
			}
			return jp.apply(m, steps[1:])
		case []any:
			if jp.strict {
				return nil, false, fmt.Errorf("member %q of an array", st.key)
			}
			return jp.each(x, steps)
		}
		if jp.strict {
			return nil, false, fmt.Errorf("member %q of a scalar", st.key)
		}
		return nil, false, nil
	case '[':
		a, ok := v.([]any)
		if !ok {
			if jp.strict {
				return nil, false, fmt.Errorf("index %d of a non-array", st.index)
			}
			a = []any{v}
		}
		if st.index >= len(a) {
			if jp.strict {
				return nil, false, fmt.Errorf("index %d out of bounds", st.index)
			}
			return nil, false, nil
		}
		return jp.apply(a[st.index], steps[1:])
	}
	switch x := v.(type) {
	case []any:
		return jp.each(x, append([]pathStep{{kind: 'x'}}, steps[1:]...))
	case *jsonObject:
		return jp.each(x.vals, append([]pathStep{{kind: 'x'}}, steps[1:]...))
	}
	if jp.strict {
		return nil, false, fmt.Errorf("wildcard of a scalar")
	}
	return nil, false, nil
}

// each applies steps (after the first, which selects every element) to
// every element of a, collecting what is found.
func (jp *jsonPath) each(a []any, steps []pathStep) (any, bool, error) {
	rest := steps
	if steps[0].kind == 'x' {
		rest = steps[1:]
	}
	out := []any{}
	for _, e := range a {
		var r any
		var ok bool
		var err error
		if steps[0].kind == 'x' {
			r, ok, err = jp.apply(e, rest)
		} else {
			r, ok, err = jp.apply(e, steps)
		}
		if err != nil {
			return nil, false, err
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, len(out) > 0, nil
}

func checkJSONPath(c *Call) error {
	return checkConstString(1, func(s string) error { _, err := parseJSONPath(s); return err })(c)
}

// jsonPathArg returns the compiled path of argument x for a row.
func jsonPathArg(c *Call, x *Eval) (func(types.Row) (*jsonPath, bool, error), error) {
	if p, null, ok := constStringEval(x); ok {
		if null {
			return func(types.Row) (*jsonPath, bool, error) { return nil, true, nil }, nil
		}
		jp, err := parseJSONPath(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		return func(types.Row) (*jsonPath, bool, error) { return jp, false, nil }, nil
	}
	get, cache := x.Str, newPatternCache(parseJSONPath)
	return func(r types.Row) (*jsonPath, bool, error) {
		p, null := get(r)
		if null {
			return nil, true, nil
		}
		jp, err := cache.get(p)
		return jp, false, err
	}, nil
}

// query evaluates the path of args[1] on the JSON of args[0].
func jsonQuery(c *Call, args []*Eval) (func(types.Row) (v any, found, null bool, err error), error) {
	path, err := jsonPathArg(c, args[1])
	if err != nil {
		return nil, err
	}
	x := args[0].Str
	return func(r types.Row) (any, bool, bool, error) {
		s, null := x(r)
		if null {
			return nil, false, true, nil
		}
		jp, null, err := path(r)
		if null {
			return nil, false, true, nil
		}
		if err != nil {
			return nil, false, false, err
		}
		doc, err := decodeJSON(s)
		if err != nil {
			return nil, false, false, fmt.Errorf("not JSON: %w", err)
		}
		v, found, err := jp.eval(doc)
		return v, found, false, err
	}, nil
}

func compileJSONExists(c *Call, args []*Eval) (*Eval, error) {
	q, err := jsonQuery(c, args)
	if err != nil {
		return nil, err
	}
	onError := "FALSE"
	if len(args) == 3 {
		onError, _, _ = constString(c, 2)
	}
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		_, found, null, err := q(r)
		if null {
			return false, true
		}
		if err != nil {
			switch onError {
			case "TRUE":
				return true, false
			case "UNKNOWN":
				return false, true
			case "ERROR":
				failErr(c, err)
			}
			return false, false
		}
		return found, false
	}}, nil
}

func compileJSONValue(c *Call, args []*Eval) (*Eval, error) {
	q, err := jsonQuery(c, args)
	if err != nil {
		return nil, err
	}
	t := c.T
	emptyKind, errorKind := "NULL", "NULL"
	nullEval, err := constEval(t, nil)
	if err != nil {
		return nil, err
	}
	emptyDef, errorDef := nullEval, nullEval
	if len(args) == 7 {
		emptyKind, _, _ = constString(c, 3)
		errorKind, _, _ = constString(c, 5)
		emptyDef, errorDef = args[4], args[6]
	}
	conv := unboxer(t)
	// pick: 0 the value found, 1 the ON EMPTY default, 2 the ON ERROR
	// default; the value is kept for branch 0.
	var found types.Value
	valueEval := conv(func(types.Row) (types.Value, bool) { return found, found == nil })
	pick := func(r types.Row) int {
		v, ok, null, err := q(r)
		if null {
			found = nil
			return 0
		}
		if err == nil && !ok {
			switch emptyKind {
			case "ERROR":
				fail(c, "the path found nothing")
			case "DEFAULT":
				return 1
			}
			found = nil
			return 0
		}
		if err == nil {
			found, err = jsonScalar(v, t)
		}
		if err != nil {
			switch errorKind {
			case "ERROR":
				failErr(c, err)
			case "DEFAULT":
				return 2
			}
			found = nil
		}
		return 0
	}
	return choose(t, []*Eval{valueEval, emptyDef, errorDef}, pick), nil
}

// jsonScalar converts a JSON scalar to a value of t (nil for null).
func jsonScalar(v any, t types.Type) (types.Value, error) {
	var text string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case *jsonObject, []any:
		return nil, fmt.Errorf("the path found %s, not a scalar", encodeJSON(nil, v))
	case string:
		text = x
	case json.Number:
		text = string(x)
	case bool:
		text = strconv.FormatBool(x)
	}
	if t.IsString() {
		return text, nil
	}
	if t.IsIntegral() {
		if f, err := strconv.ParseFloat(text, 64); err == nil && f == float64(int64(f)) && strings.ContainsAny(text, ".eE") {
			text = strconv.FormatInt(int64(f), 10)
		}
	}
	val, err := types.ParseValue(t.NotNull(), text, Loc)
	if err != nil {
		return nil, fmt.Errorf("the path found %s, not a %s: %w", encodeJSON(nil, v), t.NotNull(), err)
	}
	return val, nil
}

func compileJSONQuery(c *Call, args []*Eval) (*Eval, error) {
	q, err := jsonQuery(c, args)
	if err != nil {
		return nil, err
	}
	wrapper, emptyKind, errorKind := "WITHOUT", "NULL", "NULL"
	if len(args) == 5 {
		wrapper, _, _ = constString(c, 2)
		emptyKind, _, _ = constString(c, 3)
		errorKind, _, _ = constString(c, 4)
	}
	behave := func(kind string, err error) (string, bool) {
		switch kind {
		case "EMPTY ARRAY":
			return "[]", false
		case "EMPTY OBJECT":
			return "{}", false
		case "ERROR":
			failErr(c, err)
		}
		return "", true
	}
	var buf []byte
	return &Eval{Str: func(r types.Row) (string, bool) {
		v, found, null, err := q(r)
		if null {
			return "", true
		}
		if err != nil {
			return behave(errorKind, err)
		}
		if !found {
			return behave(emptyKind, fmt.Errorf("the path found nothing"))
		}
		_, isArr := v.([]any)
		_, isObj := v.(*jsonObject)
		switch wrapper {
		case "UNCONDITIONAL":
			v = []any{v}
		case "CONDITIONAL":
			if !isArr {
				v = []any{v}
			}
		default:
			if !isArr && !isObj {
				return behave(errorKind, fmt.Errorf("the path found a scalar: use WITH ARRAY WRAPPER"))
			}
		}
		buf = encodeJSON(buf[:0], v)
		return string(buf), false
	}}, nil
}

// isJSONConstructor tells whether e makes JSON text to nest as JSON.
func isJSONConstructor(e Expr) bool {
	c, ok := e.(*Call)
	return ok && (c.Name == "JSON_OBJECT" || c.Name == "JSON_ARRAY")
}

// jsonWriter returns a function appending the JSON of the value of e (not
// NULL) for a row: as Flink's JSON format writes it.
func jsonWriter(e *Eval, x Expr) func([]byte, types.Row) []byte {
	if isJSONConstructor(x) {
		f := e.Str
		return func(b []byte, r types.Row) []byte { s, _ := f(r); return append(b, s...) }
	}
	switch e.Class() {
	case ClassString:
		if !e.T.IsBinary() {
			f := e.Str
			return func(b []byte, r types.Row) []byte { s, _ := f(r); return appendJSONString(b, s) }
		}
	case ClassInt:
		if e.T.IsIntegral() {
			f := e.Int
			return func(b []byte, r types.Row) []byte { v, _ := f(r); return strconv.AppendInt(b, v, 10) }
		}
	case ClassBool:
		f := e.Bool
		return func(b []byte, r types.Row) []byte { v, _ := f(r); return strconv.AppendBool(b, v) }
	}
	// Others go through the row JSON encoder of a one-field row.
	rt := types.MustRowType(types.F("v", e.T))
	w := types.NewRowWriter(rt, types.NewArena(0))
	set := setter(e, 0)
	return func(b []byte, r types.Row) []byte {
		if err := set(r, w); err != nil {
			panic(&Error{Expr: x.String(), Err: err})
		}
		row := w.Finish()
		out, err := types.AppendJSON(nil, rt, row, nil)
		if err != nil {
			panic(&Error{Expr: x.String(), Err: err})
		}
		out = bytes.TrimPrefix(out, []byte(`{"v":`))
		out = bytes.TrimSuffix(out, []byte(`}`))
		return append(b, out...)
	}
}

func compileJSONObject(c *Call, args []*Eval) (*Eval, error) {
	onNull, _, _ := constString(c, 0)
	n := (len(args) - 1) / 2
	keys := make([]func(types.Row) (string, bool), n)
	nulls := make([]func(types.Row) bool, n)
	writers := make([]func([]byte, types.Row) []byte, n)
	for i := 0; i < n; i++ {
		k, v := args[1+2*i], args[2+2*i]
		keys[i], nulls[i], writers[i] = k.Str, v.IsNull(), jsonWriter(v, c.Args[2+2*i])
	}
	var buf []byte
	return &Eval{Str: func(r types.Row) (string, bool) {
		buf = append(buf[:0], '{')
		first := true
		for i := range keys {
			k, null := keys[i](r)
			if null {
				fail(c, "a key is NULL (the keys of JSON_OBJECT and JSON_OBJECTAGG must not be NULL)")
			}
			vnull := nulls[i](r)
			if vnull && onNull == "ABSENT" {
				continue
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = appendJSONString(buf, k)
			buf = append(buf, ':')
			if vnull {
				buf = append(buf, "null"...)
			} else {
				buf = writers[i](buf, r)
			}
		}
		buf = append(buf, '}')
		return string(buf), false
	}}, nil
}

func compileJSONArray(c *Call, args []*Eval) (*Eval, error) {
	onNull, _, _ := constString(c, 0)
	n := len(args) - 1
	nulls := make([]func(types.Row) bool, n)
	writers := make([]func([]byte, types.Row) []byte, n)
	for i := 0; i < n; i++ {
		nulls[i], writers[i] = args[1+i].IsNull(), jsonWriter(args[1+i], c.Args[1+i])
	}
	var buf []byte
	return &Eval{Str: func(r types.Row) (string, bool) {
		buf = append(buf[:0], '[')
		first := true
		for i := range writers {
			vnull := nulls[i](r)
			if vnull && onNull != "NULL" {
				continue
			}
			if !first {
				buf = append(buf, ',')
			}
			first = false
			if vnull {
				buf = append(buf, "null"...)
			} else {
				buf = writers[i](buf, r)
			}
		}
		buf = append(buf, ']')
		return string(buf), false
	}}, nil
}

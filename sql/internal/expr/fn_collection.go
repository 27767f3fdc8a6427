package expr

import (
	"strconv"

	"github.com/eddystream/eddy/sql/types"
)

// The value constructors ROW, ARRAY and MAP and the collection functions
// ITEM (a[i], m[k]), CARDINALITY, ELEMENT and ARRAY_CONTAINS. A constructor
// writes its values into an arena of its own, which is never reused, so
// that the values stay valid as long as anything refers to them.
func init() {
	register(&Builtin{
		Name: "ROW",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			fields := make([]types.Field, len(args))
			casts := make([]types.Type, len(args))
			for i, a := range args {
				if a.Kind() == types.KindNull {
					a = types.Boolean().Nullable()
				}
				fields[i] = types.F("EXPR$"+strconv.Itoa(i), a)
				casts[i] = a
			}
			return types.RowOf(fields...).NotNull(), casts, nil
		},
		Func: &Func{Compile: compileRow},
		Doc:  "ROW(value1, value2, ...) or (value1, value2, ...): a ROW of the values, its fields named EXPR$0, EXPR$1, ...",
	})
	register(&Builtin{
		Name: "ARRAY",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 0 {
				return types.Type{}, nil, &ArgError{"ARRAY", args, "one or more values of a common type"}
			}
			ct, ok := commonOf(args)
			if !ok {
				return types.Type{}, nil, &ArgError{"ARRAY", args, "one or more values of a common type"}
			}
			ct = nullableIfAnyOrNull(ct, args)
			return types.ArrayOf(ct).NotNull(), castAll(ct, args), nil
		},
		Func: &Func{Compile: compileArray},
		Doc:  "ARRAY[value1, value2, ...]: an ARRAY of the values, of their common type",
	})
	register(&Builtin{
		Name: "MAP",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			want := "pairs of keys and values, keys of a common type and values of a common type"
			if len(args) == 0 || len(args)%2 != 0 {
				return types.Type{}, nil, &ArgError{"MAP", args, want}
			}
			var ks, vs []types.Type
			for i := 0; i < len(args); i += 2 {
				ks, vs = append(ks, args[i]), append(vs, args[i+1])
			}
			kt, ok1 := commonOf(ks)
			vt, ok2 := commonOf(vs)
			if !ok1 || !ok2 {
				return types.Type{}, nil, &ArgError{"MAP", args, want}
			}
			kt, vt = nullableIfAnyOrNull(kt, ks), nullableIfAnyOrNull(vt, vs)
			casts := make([]types.Type, len(args))
			for i := range args {
				if i%2 == 0 {
					casts[i] = kt
				} else {
					casts[i] = vt
				}
			}
			return types.MapOf(kt, vt).NotNull(), casts, nil
		},
		Func: &Func{Compile: compileMap},
		Doc:  "MAP[key1, value1, key2, value2, ...]: a MAP of the pairs; a key given twice keeps its last value",
	})
	register(&Builtin{
		Name: "ITEM",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) == 2 {
				switch t := args[0]; t.Kind() {
				case types.KindArray:
					if famInt.accepts(args[1]) {
						return t.Elem().Nullable(), []types.Type{t, famInt.cast(args[1])}, nil
					}
				case types.KindMap:
					if _, ok := types.CommonType(t.Key(), args[1].Nullable()); ok || args[1].Kind() == types.KindNull {
						return t.Value().Nullable(), []types.Type{t, t.Key().WithNullability(args[1].IsNullable())}, nil
					}
				}
			}
			return types.Type{}, nil, &ArgError{"[]", args, "an ARRAY and an INT index, or a MAP and a key"}
		},
		Func: &Func{Compile: compileItem},
		Doc:  "array[index] or map[key]: the element at index (from 1) of array, or the value of key in map; NULL if there is none",
	})
	register(&Builtin{
		Name: "CARDINALITY",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 1 || !args[0].IsConstructed() || args[0].Kind() == types.KindRow {
				return types.Type{}, nil, &ArgError{"CARDINALITY", args, "an ARRAY, a MAP or a MULTISET"}
			}
			return nullableIfAny(types.Int(), args), nil, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			if args[0].Class() == ClassArray {
				f := args[0].Arr
				return &Eval{Int: func(r types.Row) (int64, bool) { a, n := f(r); return int64(a.Len()), n }}, nil
			}
			f := args[0].Map
			if args[0].T.Kind() == types.KindMultiset {
				return &Eval{Int: func(r types.Row) (int64, bool) {
					m, null := f(r)
					if null {
						return 0, true
					}
					total, counts := int64(0), m.Values()
					for j := 0; j < counts.Len(); j++ {
						total += counts.Int64(j)
					}
					return total, false
				}}, nil
			}
			return &Eval{Int: func(r types.Row) (int64, bool) { m, n := f(r); return int64(m.Len()), n }}, nil
		}},
		Doc: "CARDINALITY(collection): the number of elements of an array or multiset, or of entries of a map",
	})
	register(&Builtin{
		Name: "ELEMENT",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 1 || args[0].Kind() != types.KindArray {
				return types.Type{}, nil, &ArgError{"ELEMENT", args, "an ARRAY"}
			}
			return args[0].Elem().Nullable(), nil, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			f := args[0].Arr
			return elemEval(c.T, func(r types.Row) (types.Array, int, bool) {
				a, null := f(r)
				if null || a.Len() == 0 {
					return a, 0, true
				}
				if a.Len() > 1 {
					fail(c, "the array has %d elements, not one", a.Len())
				}
				return a, 0, false
			}), nil
		}},
		Doc: "ELEMENT(array): the sole element of array; NULL if it is empty; an error if it has more than one",
	})
	register(&Builtin{
		Name: "ARRAY_CONTAINS",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 || args[0].Kind() != types.KindArray {
				return types.Type{}, nil, &ArgError{"ARRAY_CONTAINS", args, "an ARRAY and a value of its element type"}
			}
			et := args[0].Elem()
			if _, ok := types.CommonType(et.Nullable(), args[1].Nullable()); !ok && args[1].Kind() != types.KindNull {
				return types.Type{}, nil, &ArgError{"ARRAY_CONTAINS", args, "an ARRAY and a value of its element type"}
			}
			return types.Boolean().WithNullability(args[0].IsNullable()), []types.Type{args[0], et.WithNullability(args[1].IsNullable())}, nil
		},
		Func: &Func{Compile: compileArrayContains},
		Doc:  "ARRAY_CONTAINS(array, value): whether array has an element equal to value (NULL finds a NULL element); NULL if array is NULL",
	})
}

// nullableIfAnyOrNull makes t nullable if any of args is nullable.
func nullableIfAnyOrNull(t types.Type, args []types.Type) types.Type {
	for _, a := range args {
		if a.IsNullable() {
			return t.Nullable()
		}
	}
	return t.NotNull()
}

// appender returns a function appending the value of e for a row to an
// array writer.
func appender(e *Eval) func(types.Row, *types.ArrayWriter) error {
	isNull := e.IsNull()
	var put func(types.Row, *types.ArrayWriter) error
	switch e.Class() {
	case ClassBool:
		f := e.Bool
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendBool(v); return nil }
	case ClassInt:
		f := e.Int
		switch e.T.Kind() {
		case types.KindDate:
			put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendDate(types.Date(v)); return nil }
		case types.KindTime:
			put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendTime(types.Time(v)); return nil }
		default:
			put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendInt64(v); return nil }
		}
	case ClassFloat:
		f := e.Float
		if e.T.Kind() == types.KindFloat {
			put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendFloat32(float32(v)); return nil }
		} else {
			put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendFloat64(v); return nil }
		}
	case ClassDecimal:
		f := e.Dec
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); return w.AppendDecimal(v) }
	case ClassString:
		f := e.Str
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendString(v); return nil }
	case ClassTimestamp:
		f := e.TS
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendTimestamp(v); return nil }
	case ClassRow:
		f := e.Row
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendRow(v); return nil }
	case ClassArray:
		f := e.Arr
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendArray(v); return nil }
	default:
		f := e.Map
		put = func(r types.Row, w *types.ArrayWriter) error { v, _ := f(r); w.AppendMap(v); return nil }
	}
	return func(r types.Row, w *types.ArrayWriter) error {
		if isNull(r) {
			w.AppendNull()
			return nil
		}
		return put(r, w)
	}
}

// setter returns a function setting field i of a row writer to the value
// of e for a row.
func setter(e *Eval, i int) func(types.Row, *types.RowWriter) error {
	isNull := e.IsNull()
	var put func(types.Row, *types.RowWriter) error
	switch e.Class() {
	case ClassBool:
		f := e.Bool
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetBool(i, v); return nil }
	case ClassInt:
		f := e.Int
		switch e.T.Kind() {
		case types.KindDate:
			put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetDate(i, types.Date(v)); return nil }
		case types.KindTime:
			put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetTime(i, types.Time(v)); return nil }
		default:
			put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetInt64(i, v); return nil }
		}
	case ClassFloat:
		f := e.Float
		if e.T.Kind() == types.KindFloat {
			put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetFloat32(i, float32(v)); return nil }
		} else {
			put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetFloat64(i, v); return nil }
		}
	case ClassDecimal:
		f := e.Dec
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); return w.SetDecimal(i, v) }
	case ClassString:
		f := e.Str
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetString(i, v); return nil }
	case ClassTimestamp:
		f := e.TS
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetTimestamp(i, v); return nil }
	case ClassRow:
		f := e.Row
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetRow(i, v); return nil }
	case ClassArray:
		f := e.Arr
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetArray(i, v); return nil }
	default:
		f := e.Map
		put = func(r types.Row, w *types.RowWriter) error { v, _ := f(r); w.SetMap(i, v); return nil }
	}
	return func(r types.Row, w *types.RowWriter) error {
		if isNull(r) {
			w.SetNull(i)
			return nil
		}
		return put(r, w)
	}
}

func compileRow(c *Call, args []*Eval) (*Eval, error) {
	w := types.NewRowWriter(c.T.Row(), types.NewArena(0))
	sets := make([]func(types.Row, *types.RowWriter) error, len(args))
	for i, a := range args {
		sets[i] = setter(a, i)
	}
	return &Eval{Row: func(r types.Row) (types.Row, bool) {
		for _, set := range sets {
			if err := set(r, w); err != nil {
				w.Reset()
				failErr(c, err)
			}
		}
		return w.Finish(), false
	}}, nil
}

func compileArray(c *Call, args []*Eval) (*Eval, error) {
	arena := types.NewArena(0)
	w := types.NewArrayWriter(c.T.Elem())
	puts := gather(args, appender)
	return &Eval{Arr: func(r types.Row) (types.Array, bool) {
		w.Reset()
		for _, put := range puts {
			if err := put(r, w); err != nil {
				failErr(c, err)
			}
		}
		return w.Finish(arena), false
	}}, nil
}

func compileMap(c *Call, args []*Eval) (*Eval, error) {
	arena := types.NewArena(0)
	w := types.NewMapWriter(c.T)
	n := len(args) / 2
	keys, vals := make([]*Eval, n), make([]func(types.Row, *types.ArrayWriter) error, n)
	putKeys := make([]func(types.Row, *types.ArrayWriter) error, n)
	for i := 0; i < n; i++ {
		keys[i] = args[2*i]
		putKeys[i] = appender(args[2*i])
		vals[i] = appender(args[2*i+1])
	}
	// A key given again later is skipped: the last one wins.
	same := make([][]func(types.Row) (int, bool), n)
	nulls := gather(keys, func(e *Eval) func(types.Row) bool { return e.IsNull() })
	for i := range keys {
		for j := i + 1; j < n; j++ {
			same[i] = append(same[i], Comparator(keys[i], keys[j]))
		}
	}
	shadowed := func(r types.Row, i int) bool {
		for k, cmp := range same[i] {
			j := i + 1 + k
			if nulls[i](r) || nulls[j](r) {
				if nulls[i](r) && nulls[j](r) {
					return true
				}
				continue
			}
			if v, _ := cmp(r); v == 0 {
				return true
			}
		}
		return false
	}
	return &Eval{Map: func(r types.Row) (types.Map, bool) {
		w.Reset()
		for i := 0; i < n; i++ {
			if shadowed(r, i) {
				continue
			}
			if err := putKeys[i](r, w.Keys()); err != nil {
				failErr(c, err)
			}
			if err := vals[i](r, w.Values()); err != nil {
				failErr(c, err)
			}
		}
		return w.Finish(arena), false
	}}, nil
}

// elemEval returns an Eval of type t reading the element of an array that
// get gives for a row.
func elemEval(t types.Type, get func(types.Row) (types.Array, int, bool)) *Eval {
	ev := &Eval{T: t}
	ok := func(r types.Row) (types.Array, int, bool) {
		a, j, null := get(r)
		if null || a.IsNull(j) {
			return a, j, false
		}
		return a, j, true
	}
	switch ClassOf(t) {
	case ClassBool:
		ev.Bool = func(r types.Row) (bool, bool) {
			if a, j, ok := ok(r); ok {
				return a.Bool(j), false
			}
			return false, true
		}
	case ClassInt:
		k := t.Kind()
		ev.Int = func(r types.Row) (int64, bool) {
			a, j, ok := ok(r)
			if !ok {
				return 0, true
			}
			switch k {
			case types.KindDate:
				return int64(a.Date(j)), false
			case types.KindTime:
				return int64(a.Time(j)), false
			}
			return a.Int64(j), false
		}
	case ClassFloat:
		single := t.Kind() == types.KindFloat
		ev.Float = func(r types.Row) (float64, bool) {
			a, j, ok := ok(r)
			if !ok {
				return 0, true
			}
			if single {
				return float64(a.Float32(j)), false
			}
			return a.Float64(j), false
		}
	case ClassDecimal:
		p, s := t.Precision(), t.Scale()
		ev.Dec = func(r types.Row) (types.Decimal, bool) {
			if a, j, ok := ok(r); ok {
				return a.Decimal(j, p, s), false
			}
			return types.Decimal{}, true
		}
	case ClassString:
		ev.Str = func(r types.Row) (string, bool) {
			if a, j, ok := ok(r); ok {
				return a.String(j), false
			}
			return "", true
		}
	case ClassTimestamp:
		p := t.Precision()
		ev.TS = func(r types.Row) (types.Timestamp, bool) {
			if a, j, ok := ok(r); ok {
				return a.Timestamp(j, p), false
			}
			return types.Timestamp{}, true
		}
	case ClassRow:
		rt := t.Row()
		ev.Row = func(r types.Row) (types.Row, bool) {
			if a, j, ok := ok(r); ok {
				return a.Row(j, rt), false
			}
			return types.Row{}, true
		}
	case ClassArray:
		ev.Arr = func(r types.Row) (types.Array, bool) {
			if a, j, ok := ok(r); ok {
				return a.Array(j), false
			}
			return types.Array{}, true
		}
	default:
		ev.Map = func(r types.Row) (types.Map, bool) {
			if a, j, ok := ok(r); ok {
				return a.Map(j), false
			}
			return types.Map{}, true
		}
	}
	return ev
}

func compileItem(c *Call, args []*Eval) (*Eval, error) {
	if args[0].Class() == ClassArray {
		arr, idx := args[0].Arr, args[1].Int
		return elemEval(c.T, func(r types.Row) (types.Array, int, bool) {
			a, n1 := arr(r)
			i, n2 := idx(r)
			if n1 || n2 || i < 1 || i > int64(a.Len()) {
				return a, 0, true
			}
			return a, int(i - 1), false
		}), nil
	}
	m, key := args[0].Map, args[1]
	keyType := args[0].T.Key()
	keyNull := key.IsNull()
	// The key is compared with each of the map's keys.
	var cur types.Array
	var curJ int
	elem := elemEval(keyType, func(types.Row) (types.Array, int, bool) { return cur, curJ, false })
	elem.T = keyType
	cmp := Comparator(elem, key)
	return elemEval(c.T, func(r types.Row) (types.Array, int, bool) {
		mv, null := m(r)
		if null || keyNull(r) {
			return types.Array{}, 0, true
		}
		ks := mv.Keys()
		for j := ks.Len() - 1; j >= 0; j-- {
			if ks.IsNull(j) {
				continue
			}
			cur, curJ = ks, j
			if v, _ := cmp(r); v == 0 {
				return mv.Values(), j, false
			}
		}
		return types.Array{}, 0, true
	}), nil
}

func compileArrayContains(c *Call, args []*Eval) (*Eval, error) {
	arr, needle := args[0].Arr, args[1]
	et := args[0].T.Elem()
	needleNull := needle.IsNull()
	var cur types.Array
	var curJ int
	elem := elemEval(et.Nullable(), func(types.Row) (types.Array, int, bool) { return cur, curJ, false })
	cmp := Comparator(elem, needle)
	return &Eval{Bool: func(r types.Row) (bool, bool) {
		a, null := arr(r)
		if null {
			return false, true
		}
		nn := needleNull(r)
		for j := 0; j < a.Len(); j++ {
			if a.IsNull(j) {
				if nn {
					return true, false
				}
				continue
			}
			if nn {
				continue
			}
			cur, curJ = a, j
			if v, _ := cmp(r); v == 0 {
				return true, false
			}
		}
		return false, false
	}}, nil
}

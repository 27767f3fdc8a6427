package expr

import (
	"github.com/eddystream/eddy/sql/types"
)

// Setter compiles e and returns a function that writes its value for an
// input row into field i of a row writer (NULL as NULL). The field must
// have e's type.
func Setter(e Expr, i int) (func(in types.Row, w *types.RowWriter), error) {
	ev, err := Compile(e)
	if err != nil {
		return nil, err
	}
	return SetterOf(ev, i), nil
}

// SetterOf returns the function that writes the value of ev into field i.
func SetterOf(ev *Eval, i int) func(in types.Row, w *types.RowWriter) {
	switch ev.Class() {
	case ClassBool:
		f := ev.Bool
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetBool(i, v)
			}
		}
	case ClassInt:
		f := ev.Int
		switch ev.T.Kind() {
		case types.KindDate:
			return func(in types.Row, w *types.RowWriter) {
				if v, null := f(in); null {
					w.SetNull(i)
				} else {
					w.SetDate(i, types.Date(v))
				}
			}
		case types.KindTime:
			return func(in types.Row, w *types.RowWriter) {
				if v, null := f(in); null {
					w.SetNull(i)
				} else {
					w.SetTime(i, types.Time(v))
				}
			}
		}
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetInt64(i, v)
			}
		}
	case ClassFloat:
		f := ev.Float
		if ev.T.Kind() == types.KindFloat {
			return func(in types.Row, w *types.RowWriter) {
				if v, null := f(in); null {
					w.SetNull(i)
				} else {
					w.SetFloat32(i, float32(v))
				}
			}
		}
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetFloat64(i, v)
			}
		}
	case ClassDecimal:
		f := ev.Dec
		p, s := ev.T.Precision(), ev.T.Scale()
		return func(in types.Row, w *types.RowWriter) {
			v, null := f(in)
			if null {
				w.SetNull(i)
				return
			}
			d, err := v.Fit(p, s)
			if err == nil {
				err = w.SetDecimal(i, d)
			}
			if err != nil {
				panic(&Error{Expr: ev.T.String(), Err: err})
			}
		}
	case ClassString:
		f := ev.Str
		if ev.T.IsBinary() {
			return func(in types.Row, w *types.RowWriter) {
				if v, null := f(in); null {
					w.SetNull(i)
				} else {
					w.SetBytes(i, []byte(v))
				}
			}
		}
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetString(i, v)
			}
		}
	case ClassTimestamp:
		f := ev.TS
		if ev.T.Precision() <= types.MaxCompactTimestampPrecision {
			return func(in types.Row, w *types.RowWriter) {
				if v, null := f(in); null {
					w.SetNull(i)
				} else {
					w.SetTimestampMillis(i, v.Millis)
				}
			}
		}
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetTimestamp(i, v)
			}
		}
	case ClassRow:
		f := ev.Row
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetRow(i, v)
			}
		}
	case ClassArray:
		f := ev.Arr
		return func(in types.Row, w *types.RowWriter) {
			if v, null := f(in); null {
				w.SetNull(i)
			} else {
				w.SetArray(i, v)
			}
		}
	}
	f := ev.Map
	return func(in types.Row, w *types.RowWriter) {
		if v, null := f(in); null {
			w.SetNull(i)
		} else {
			w.SetMap(i, v)
		}
	}
}

// RefSetterOf is SetterOf for a writer that is finished before the input
// row's memory changes (the projection of one row into another): a string
// value is kept by reference until the row is finished (see
// types.RowWriter.SetStringRef) instead of copied twice. Strings the
// expressions compute are Go strings, and the others view the input row.
func RefSetterOf(ev *Eval, i int) func(in types.Row, w *types.RowWriter) {
	if ev.Class() != ClassString || ev.T.IsBinary() {
		return SetterOf(ev, i)
	}
	f := ev.Str
	return func(in types.Row, w *types.RowWriter) {
		if v, null := f(in); null {
			w.SetNull(i)
		} else {
			w.SetStringRef(i, v)
		}
	}
}

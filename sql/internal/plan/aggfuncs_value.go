package plan

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/eddystream/eddy/agg"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
	"github.com/eddystream/eddy/sql/types"
)

// The aggregates of values keep the values themselves, in the order they
// arrive, as Flink's do:
//
//   - FIRST_VALUE(x) and LAST_VALUE(x): the first and the last non-NULL x
//     of the group to arrive. Over an input that retracts rows, a
//     retraction takes back the earliest copy of its value still in the
//     group, and the result is the value of the earliest (latest) copy
//     left, as Flink's FirstValueWithRetractAggFunction and
//     LastValueWithRetractAggFunction order the values by arrival.
//   - LISTAGG(x [, separator]): the non-NULL strings joined by the
//     separator (a constant, ',' by default) in arrival order; NULL for
//     none.
//   - ARRAY_AGG(x [RESPECT NULLS | IGNORE NULLS]): the values, NULLs
//     included unless IGNORE NULLS, as an array in arrival order; NULL for
//     no rows.
//   - COLLECT(x): the non-NULL values as a MULTISET (each distinct value
//     with its count), empty for none.
//   - JSON_ARRAYAGG(x [NULL | ABSENT ON NULL]) and JSON_OBJECTAGG([KEY] k
//     VALUE v [NULL | ABSENT ON NULL]): a JSON array of the values, a JSON
//     object of the pairs, in arrival order; '[]' or '{}' for none. The
//     argument is the JSON of the row's element or member, made by
//     JSON_ARRAY or JSON_OBJECT (expr.JSONAggregateCall), so that values
//     are written as those write them; the lists keep the text between
//     its brackets, none for a value left out (ABSENT ON NULL). A key
//     that two members of the object share fails the query, as in Flink.
//
// A retraction of LISTAGG, ARRAY_AGG and COLLECT takes the earliest equal
// value out of the list, as Flink's with-retract functions remove the
// first equal element.
//
// The lists live in the accumulator (Acc.S), as the entries' encodings
// each after its length (a uvarint): the result is the whole list, which
// the group's accumulator is read for anyway. FIRST_VALUE and LAST_VALUE
// keep only their value (its key encoding, in Acc.S) over an insert-only
// input; over a changelog the group's values are in two views, so that a
// retraction costs a few state accesses and not a rewrite of a list:
//
//   - the order view holds an entry per value copy, keyed by the copy's
//     arrival number (8 bytes, big-endian, so the view's byte order is
//     arrival order) and its value's encoding;
//   - the queue view holds, per distinct value, the arrival numbers of its
//     copies as a queue (copies arrive in increasing number, and a
//     retraction takes the earliest): the entries "h"+value and "t"+value
//     are the queue's head and tail positions, and "e"+value+position the
//     arrival number at a position.
//
// The accumulator's words after the count are then the next arrival
// number and the arrival number of the current result's copy; when that
// copy is retracted, the order view gives the next one.

// valueSlots places an aggregate of values in the accumulator.
func (a *sqlAgg) valueSlots(c *aggCall, s *aggSlots, retract bool) {
	s.kind = map[string]aggKind{"FIRST_VALUE": kFirst, "LAST_VALUE": kLast, "LISTAGG": kListAgg, "ARRAY_AGG": kArray, "COLLECT": kCollect,
		"JSON_ARRAYAGG": kJSONArray, "JSON_OBJECTAGG": kJSONObject}[c.Name]
	s.s = a.strs
	a.strs++
	if s.kind == kFirst || s.kind == kLast {
		c.Distinct = false // the first and last of the distinct values are those of the values
	}
	if retract && (s.kind == kFirst || s.kind == kLast) {
		a.words += 2 // the next arrival number, the current copy's
		s.view = a.views
		a.views += 2 // the queues, the order
	}
}

// valueParams reads the arguments of an aggregate of values after its
// first into ac: LISTAGG's separator, ARRAY_AGG's IGNORE NULLS.
func (g *aggregation) valueParams(name string, c *parser.FuncCall, ac *aggCall) error {
	switch name {
	case "FIRST_VALUE", "LAST_VALUE", "LISTAGG", "ARRAY_AGG", "COLLECT":
	default:
		return nil
	}
	if len(c.WithinGroup) > 0 {
		return g.q.errorf(c.Pos, "%s ... WITHIN GROUP (ORDER BY ...) is not supported: the values are in arrival order", name)
	}
	if c.NullTreatment != "" && name != "ARRAY_AGG" {
		return g.q.errorf(c.Pos, "%s takes no %s: only ARRAY_AGG does", name, c.NullTreatment)
	}
	ac.IgnoreNulls = c.NullTreatment == "IGNORE NULLS"
	ac.Sep = ","
	if name != "LISTAGG" || len(c.Args) < 2 {
		return nil
	}
	e, err := g.base.Expr(c.Args[1])
	if err != nil {
		return err
	}
	var sep string
	l, ok := e.(*expr.Literal)
	if ok {
		sep, ok = l.V.(string)
	}
	if !ok {
		return g.q.errorf(c.Args[1].Position(), "the separator of LISTAGG must be a string constant, not %s", e)
	}
	ac.Sep = sep
	return nil
}

// valueArgs tells whether an aggregate call may have n arguments.
func valueArgs(name string, n int) bool {
	return name == "LISTAGG" && n == 2
}

// valueResultType is the result type of an aggregate of values of arg.
func valueResultType(name string, arg types.Type) (types.Type, error) {
	switch name {
	case "LISTAGG":
		if k := arg.Kind(); k != types.KindChar && k != types.KindVarChar {
			return types.Type{}, fmt.Errorf("LISTAGG takes a string, not %s", arg)
		}
		return types.String().Nullable(), nil
	case "ARRAY_AGG":
		return types.ArrayOf(arg).Nullable(), nil
	case "COLLECT":
		return types.MultisetOf(arg).NotNull(), nil
	case "JSON_ARRAYAGG", "JSON_OBJECTAGG":
		return types.String().NotNull(), nil
	}
	return arg.Nullable(), nil
}

// foldValue adds (sign 1) or retracts (sign -1) the value of call i's
// argument in in; acc.W[s.w] counts the values kept.
func (a *sqlAgg) foldValue(i int, c *aggCall, s *aggSlots, acc *Acc, in types.Row, v agg.Views, first int, sign int64) {
	var x string
	switch s.kind {
	case kListAgg:
		x = in.String(c.Arg)
	case kJSONArray, kJSONObject:
		// The text between the brackets: the element or member, if any.
		j := in.String(c.Arg)
		if x = j[1 : len(j)-1]; x == "" {
			return
		}
	default:
		x = a.keys[i].Key(in)
	}
	if s.kind != kFirst && s.kind != kLast {
		if sign > 0 {
			acc.S[s.s] = appendEntry(acc.S[s.s], x)
			acc.W[s.w]++
		} else if l, ok := removeEntry(acc.S[s.s], x); ok {
			acc.S[s.s] = l
			acc.W[s.w]--
		}
		return
	}
	if s.view < 0 {
		// An insert-only input: the first or the last value is all.
		if sign < 0 {
			panic(&expr.Error{Expr: c.text, Err: fmt.Errorf("a row taken back from an aggregation whose input was planned insert-only")})
		}
		if s.kind == kLast || acc.W[s.w] == 0 {
			acc.S[s.s] = strings.Clone(x)
		}
		acc.W[s.w]++
		return
	}
	queues, order := first+s.view, first+s.view+1
	if sign > 0 {
		acc.W[s.w+1]++
		n := acc.W[s.w+1] // the copy's arrival number
		tail := v.Count(queues, "t"+x)
		if tail == 0 {
			tail = 1
			setView(v, queues, "h"+x, 1)
		}
		setView(v, queues, "e"+x+position(tail), int64(n))
		setView(v, queues, "t"+x, tail+1)
		v.Add(order, position(int64(n))+x, 1)
		if s.kind == kLast || acc.W[s.w] == 0 {
			acc.S[s.s], acc.W[s.w+2] = strings.Clone(x), n
		}
		acc.W[s.w]++
		return
	}
	head, tail := v.Count(queues, "h"+x), v.Count(queues, "t"+x)
	if head == 0 || head >= tail {
		return // a value the group does not hold
	}
	n := v.Count(queues, "e"+x+position(head))
	setView(v, queues, "e"+x+position(head), 0)
	if head+1 == tail {
		setView(v, queues, "h"+x, 0)
		setView(v, queues, "t"+x, 0)
	} else {
		setView(v, queues, "h"+x, head+1)
	}
	v.Add(order, position(n)+x, -1)
	acc.W[s.w]--
	if uint64(n) != acc.W[s.w+2] {
		return
	}
	acc.S[s.s], acc.W[s.w+2] = "", 0
	strs, words := acc.S, acc.W // copies of the headers: acc stays off the heap
	v.Range(order, func(key string, _ int64) bool {
		strs[s.s] = strings.Clone(key[8:])
		words[s.w+2] = binary.BigEndian.Uint64([]byte(key[:8]))
		return s.kind == kLast // the last copy for LAST_VALUE, the first for FIRST_VALUE
	})
}

// position encodes an arrival number or a queue position so that the
// encodings' byte order is the numbers'.
func position(n int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	return string(b[:])
}

// setView sets the count of key in view to n (0 removes it).
func setView(v agg.Views, view int, key string, n int64) {
	before := v.Count(view, key)
	if n != before {
		v.Add(view, key, n-before)
	}
}

// appendEntry appends x to a list of entries.
func appendEntry(l, x string) string {
	var b [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(b[:], uint64(len(x)))
	return l + string(b[:k]) + x
}

// nextEntry returns the first entry of l and the rest of l.
func nextEntry(l string) (x, rest string) {
	n, k := binary.Uvarint([]byte(l[:min(len(l), binary.MaxVarintLen64)]))
	end := k + int(n)
	return l[k:end], l[end:]
}

// removeEntry takes the earliest entry equal to x out of l.
func removeEntry(l, x string) (string, bool) {
	for rest := l; rest != ""; {
		start := len(l) - len(rest)
		var e string
		e, rest = nextEntry(rest)
		if e == x {
			return l[:start] + rest, true
		}
	}
	return l, false
}

// mergeValue combines the values of y (not empty) into out, a copy of x,
// y's rows having arrived after x's (the later pane).
func mergeValue(s *aggSlots, out *Acc, x, y Acc) {
	switch s.kind {
	case kFirst:
		if x.W[s.w] == 0 {
			out.S[s.s] = y.S[s.s]
		}
	case kLast:
		out.S[s.s] = y.S[s.s]
	default:
		out.S[s.s] = x.S[s.s] + y.S[s.s]
	}
}

// resultValue writes the result of call k, an aggregate of values, into
// field i.
func (a *sqlAgg) resultValue(k, i int, c *aggCall, s *aggSlots, acc Acc, w *types.RowWriter) {
	n := int64(acc.W[s.w])
	if n <= 0 && s.kind != kCollect && s.kind != kJSONArray && s.kind != kJSONObject {
		w.SetNull(i)
		return
	}
	kt := a.keys[k].KeyType()
	value := func(key string) types.Value { return types.FieldValue(kt, a.keys[k].KeyRow(key), 0) }
	var err error
	switch s.kind {
	case kFirst, kLast:
		err = w.SetValue(i, value(acc.S[s.s]))
	case kListAgg:
		var b strings.Builder
		for l, first := acc.S[s.s], true; l != ""; first = false {
			var e string
			e, l = nextEntry(l)
			if !first {
				b.WriteString(c.Sep)
			}
			b.WriteString(e)
		}
		w.SetString(i, b.String())
	case kJSONArray, kJSONObject:
		err = a.resultJSON(s.kind, acc.S[s.s], i, w)
	case kArray:
		vs := make([]types.Value, 0, n)
		for l := acc.S[s.s]; l != ""; {
			var e string
			e, l = nextEntry(l)
			vs = append(vs, value(e))
		}
		err = w.SetValue(i, vs)
	case kCollect:
		// Each distinct value once, in the order of its first copy.
		var es []types.MapEntry
		at := map[string]int{}
		for l := acc.S[s.s]; l != ""; {
			var e string
			e, l = nextEntry(l)
			if j, ok := at[e]; ok {
				es[j].Value = es[j].Value.(int32) + 1
				continue
			}
			at[e] = len(es)
			es = append(es, types.MapEntry{Key: value(e), Value: int32(1)})
		}
		err = w.SetValue(i, es)
	}
	if err != nil {
		panic(&expr.Error{Expr: c.text, Err: err})
	}
}

// resultJSON writes the JSON array (kJSONArray) or object of a list of
// elements or members into field i, refusing a key two members share.
func (a *sqlAgg) resultJSON(kind aggKind, l string, i int, w *types.RowWriter) error {
	open, end := byte('['), byte(']')
	var keys map[string]bool
	if kind == kJSONObject {
		open, end, keys = '{', '}', map[string]bool{}
	}
	b := []byte{open}
	for k := 0; l != ""; k++ {
		var e string
		e, l = nextEntry(l)
		if keys != nil {
			key := memberKey(e)
			if keys[key] {
				return fmt.Errorf("the key %s occurs twice in the object", key)
			}
			keys[key] = true
		}
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	w.SetString(i, string(append(b, end)))
	return nil
}

// memberKey returns the key of a JSON object's member "key":value, as
// JSON text.
func memberKey(m string) string {
	for j := 1; j < len(m); j++ {
		switch m[j] {
		case '\\':
			j++
		case '"':
			return m[:j+1]
		}
	}
	return m
}

package plan

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/parser"
)

// Digests. Sub-plan reuse (reuse.go) builds two relations once when they
// compute the same changelog: the same operator over the same inputs with
// the same parameters. A relation's digest is the text of everything that
// determines its output: its Go type, its line in EXPLAIN, its row type
// (names and types, nullability included), its properties, the digests of
// its inputs, and every field of its struct, read by reflection, so that a
// parameter EXPLAIN does not print (a window's assigner, a scan's
// rowtime, a join's unique keys, an aggregate call's argument type) and a
// field added later are never left out. Expressions are digested whole:
// every node's Go type, column index, name, type, literal value and
// function.
//
// Reading the fields by reflection follows these rules:
//
//   - a relation among the fields (an input, a window aggregation's TVF, a
//     lookup join's table) is its digest, by id;
//   - a function of an expression is its implementation, by identity: two
//     calls of one built-in or user-defined function share it;
//   - positions in the SQL text (parser.Pos) and the catalog are left out:
//     positions only place errors, and every relation of one job reads the
//     same catalog and settings (state TTL, mini-batches, idle timeouts are
//     read from it when the job is built);
//   - fields a type derives from the others (skipFields) are left out;
//   - a func, a channel or an unsafe pointer cannot be compared: a relation
//     holding one is its own, as one that is never merged.
//
// Some relations are their own whatever their fields:
//
//   - a sink, and a window aggregation that writes its late rows into a
//     table (through a sink of its own): two INSERTs write their rows
//     twice, so merging them would change what the tables receive;
//   - a relation whose expressions call a function whose calls give
//     independent values (RAND, RAND_INTEGER, UUID: random, see
//     randomCall): two calls written apart give independent values, which
//     a run without reuse keeps apart (two RAND() columns that a join
//     compares); merged, they would always agree, which no run without
//     reuse does. Such a relation is still built once for all the
//     relations that read it, which is one computation, as Flink shares
//     it. A Calc over such a relation that reads none of its random values
//     is digested as it reads the relation under it (overRandom), and
//     merged as others.
//
// Functions that read the clock (PROCTIME, NOW, CURRENT_TIMESTAMP,
// LOCALTIMESTAMP, CURRENT_DATE, UNIX_TIMESTAMP(), ...) are volatile too,
// but a relation calling them is merged: a run without reuse may read the
// same millisecond in both copies, so the shared values are those of one
// such run. So are operators whose output depends on the order rows
// arrive in or on the moment they are processed (processing-time windows,
// deduplication by processing time, lookup joins against an external
// table): a run without reuse may see the same order, clock and table in
// both copies. Flink shares them too.
type digester struct {
	// ids holds the id of every relation digested: relations with the
	// same id compute the same changelog.
	ids map[Rel]int
	// intern maps a digest to its id.
	intern map[string]int
	// own says why a relation is its own (never merged), by relation.
	own  map[Rel]string
	next int
}

func newDigester() *digester {
	return &digester{ids: map[Rel]int{}, intern: map[string]int{}, own: map[Rel]string{}}
}

// id returns the id of r's digest: equal for relations that compute the
// same changelog, distinct for a relation that is its own.
func (d *digester) id(r Rel) int {
	if id, ok := d.ids[r]; ok {
		return id
	}
	text, own := d.digest(r)
	var id int
	if own != "" {
		d.own[r] = own
		id = d.fresh()
	} else if known, ok := d.intern[text]; ok {
		id = known
	} else {
		id = d.fresh()
		d.intern[text] = id
	}
	d.ids[r] = id
	return id
}

// identity returns an id no other relation has, for a relation that reuse
// turned off keeps apart from those equal to it.
func (d *digester) identity() int { return d.fresh() }

func (d *digester) fresh() int {
	d.next++
	return d.next
}

// digest returns the text of r's digest, or why r is its own.
func (d *digester) digest(r Rel) (text, own string) {
	switch r := r.(type) {
	case *SinkRel:
		return "", "a sink writes into its table: two INSERTs write their rows twice"
	case *lateSourceRel:
		return "", "the late rows of one window operator"
	case *WindowAggregateRel:
		if r.late != nil {
			return "", "its late rows go into " + r.late.table + " through a sink of its own"
		}
	case *CalcRel:
		if f, ok := r.overRandom(); ok {
			// The Calc as it reads the relation under the Calcs below it:
			// equal for two Calcs that read no random value of the
			// (distinct) Calcs below them.
			text, own := d.digest(f)
			if own != "" {
				return "", own
			}
			p := r.Props()
			return fmt.Sprintf("over Calcs\n%s\nmode=%v upsertKey=%v rowtime=%d proctime=%d\n%s", rowTypeText(r), p.Mode, p.UpsertKey, p.Rowtime, p.Proctime, text), ""
		}
	}
	e := &encoder{d: d, seen: map[pointer]bool{}}
	p := r.Props()
	fmt.Fprintf(&e.b, "%T\n%s\n%s\nmode=%v upsertKey=%v rowtime=%d proctime=%d\n", r, r.Describe(), rowTypeText(r), p.Mode, p.UpsertKey, p.Rowtime, p.Proctime)
	for _, in := range r.Inputs() {
		fmt.Fprintf(&e.b, "input #%d\n", d.id(in))
	}
	e.fields(reflect.ValueOf(r).Elem(), reflect.TypeOf(r).Elem().Name())
	return e.b.String(), e.own
}

// rowTypeText renders r's row type: the names and types of its fields.
func rowTypeText(r Rel) string {
	var parts []string
	for _, f := range r.Schema().Fields() {
		parts = append(parts, fmt.Sprintf("%s %s", fieldName(f.Name), f.Type))
	}
	return "row(" + strings.Join(parts, ", ") + ")"
}

func fieldName(n string) string { return fmt.Sprintf("%q", n) }

// skipFields are the fields of relations (by type and field name) that
// digests leave out, each with why: what they hold is derived from fields
// that are digested, or read from the catalog, the same for every relation
// of a job.
var skipFields = map[string]map[string]string{
	"AggregateRel": {
		"cat": "the catalog, whose settings (state TTL, mini-batches) every relation of a job shares",
		"fn":  "the compiled aggregate functions: made from Calls and the input's row type",
	},
	"OverAggregateRel": {
		"cat": "the catalog, whose settings every relation of a job shares",
		"fn":  "the compiled aggregate functions: made from Calls and the input's row type",
	},
	"WindowAggregateRel": {
		"fn": "the compiled aggregate functions: made from Calls and the input's row type",
	},
}

// relFields are the fields of relations (by type and field name) that hold
// a relation digested by its own fields, less those listed, instead of by
// its digest, each with why.
var relFields = map[string]map[string][]string{
	// The window function's input is the relation the pre-projection
	// (Input) reads; the aggregation reads the pre-projection, and of the
	// window function only its kind, arguments and assigner.
	"WindowAggregateRel": {"TVF": {"Input"}},
}

var (
	relType     = reflect.TypeFor[Rel]()
	funcPtrType = reflect.TypeFor[*expr.Func]()
	callPtrType = reflect.TypeFor[*expr.Call]()
	catalogType = reflect.TypeFor[*Catalog]()
	posType     = reflect.TypeFor[parser.Pos]()
	planPkg     = reflect.TypeFor[digester]().PkgPath()
)

// encoder writes the fields of a relation into a digest.
type encoder struct {
	d *digester
	b strings.Builder
	// own is why the relation cannot be compared with others, "" if it
	// can.
	own string
	// seen holds the pointers being encoded, against cycles.
	seen map[pointer]bool
}

// pointer is a pointer being encoded: its address and type.
type pointer struct {
	addr uintptr
	t    reflect.Type
}

// fields writes the fields of the struct v, leaving out those skipFields
// names for its type.
func (e *encoder) fields(v reflect.Value, where string) {
	t := v.Type()
	skip := skipFields[t.Name()]
	if t.PkgPath() != planPkg {
		skip = nil
	}
	e.b.WriteByte('{')
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if _, ok := skip[f.Name]; ok {
			continue
		}
		e.b.WriteString(f.Name)
		e.b.WriteByte('=')
		if without, ok := relFields[t.Name()][f.Name]; ok && t.PkgPath() == planPkg && v.Field(i).Kind() == reflect.Pointer {
			e.relFields(v.Field(i), without, where+"."+f.Name)
		} else {
			e.value(v.Field(i), where+"."+f.Name)
		}
		e.b.WriteByte(' ')
	}
	e.b.WriteByte('}')
}

// relFields writes the fields of the relation that the pointer v points
// to, but those named in without.
func (e *encoder) relFields(v reflect.Value, without []string, where string) {
	if v.IsNil() {
		e.b.WriteString("nil")
		return
	}
	el := v.Elem()
	e.b.WriteString("&{")
	for i := 0; i < el.NumField(); i++ {
		name := el.Type().Field(i).Name
		if slices.Contains(without, name) {
			continue
		}
		e.b.WriteString(name)
		e.b.WriteByte('=')
		e.value(el.Field(i), where+"."+name)
		e.b.WriteByte(' ')
	}
	e.b.WriteByte('}')
}

// overRandom returns c fused with every Calc under it (see fused), when
// one of those calls a random function (randomCall): c then reads the
// relation under them.
func (c *CalcRel) overRandom() (*CalcRel, bool) {
	found := false
	for in := c.Input; ; {
		ic, ok := in.(*CalcRel)
		if !ok {
			break
		}
		for _, e := range append(append([]expr.Expr{}, ic.Projs...), ic.Cond) {
			found = found || randomCall(e)
		}
		in = ic.Input
	}
	if !found {
		return nil, false
	}
	f := c
	for {
		in, ok := f.Input.(*CalcRel)
		if !ok {
			return f, true
		}
		next := f.fused(in)
		if next == f {
			return nil, false
		}
		f = next
	}
}

// clockFuncs are the volatile built-in functions that read the clock.
var clockFuncs = map[string]bool{
	"PROCTIME": true, "NOW": true, "CURRENT_TIMESTAMP": true, "CURRENT_ROW_TIMESTAMP": true,
	"LOCALTIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIME": true, "LOCALTIME": true,
	"UNIX_TIMESTAMP": true,
}

// random tells whether a call's every evaluation gives a value of its own,
// independent of another call's: a volatile function that does not read
// the clock (RAND, RAND_INTEGER, UUID).
func random(c *expr.Call) bool {
	return c.Fn != nil && c.Fn.Volatile && !clockFuncs[c.Name]
}

// randomCall tells whether e calls a random function (see random).
func randomCall(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Call); ok && random(c) {
			found = true
		}
		return !found
	})
	return found
}

// value writes v, found at where (for the reason a relation is its own).
func (e *encoder) value(v reflect.Value, where string) {
	if e.own != "" {
		return
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			e.b.WriteString("nil")
			return
		}
		fmt.Fprintf(&e.b, "(%s)", v.Elem().Type())
		e.value(v.Elem(), where)
	case reflect.Pointer:
		if v.IsNil() {
			e.b.WriteString("nil")
			return
		}
		switch {
		case v.Type().Implements(relType):
			// Read through the pointer itself: the field holding it may be
			// unexported, which reflection does not let out as a value.
			r := reflect.NewAt(v.Type().Elem(), v.UnsafePointer()).Interface().(Rel)
			fmt.Fprintf(&e.b, "rel#%d", e.d.id(r))
			return
		case v.Type() == funcPtrType:
			fmt.Fprintf(&e.b, "fn@%x", v.Pointer())
			return
		case v.Type() == callPtrType:
			if c := reflect.NewAt(v.Type().Elem(), v.UnsafePointer()).Interface().(*expr.Call); random(c) {
				e.own = "it calls " + c.Name + ", whose calls give independent values (" + where + ")"
				return
			}
		case v.Type() == catalogType:
			e.b.WriteString("catalog")
			return
		}
		p := pointer{v.Pointer(), v.Type()}
		if e.seen[p] {
			e.b.WriteString("cycle")
			return
		}
		e.seen[p] = true
		e.b.WriteByte('&')
		e.value(v.Elem(), where)
		delete(e.seen, p)
	case reflect.Struct:
		if v.Type() == posType {
			return
		}
		if v.Type().PkgPath() == "sync" || strings.HasPrefix(v.Type().PkgPath(), "sync/") {
			// Locks and pools hold no parameters.
			return
		}
		e.fields(v, where)
	case reflect.Slice:
		if v.IsNil() {
			e.b.WriteString("nil")
			return
		}
		fallthrough
	case reflect.Array:
		e.b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			e.value(v.Index(i), fmt.Sprintf("%s[%d]", where, i))
			e.b.WriteByte(',')
		}
		e.b.WriteByte(']')
	case reflect.Map:
		if v.IsNil() {
			e.b.WriteString("nil")
			return
		}
		var entries []string
		it := v.MapRange()
		for it.Next() {
			k := &encoder{d: e.d, seen: e.seen}
			k.value(it.Key(), where)
			k.b.WriteByte(':')
			k.value(it.Value(), where+"[...]")
			if k.own != "" {
				e.own = k.own
				return
			}
			entries = append(entries, k.b.String())
		}
		sort.Strings(entries)
		fmt.Fprintf(&e.b, "map[%s]", strings.Join(entries, ","))
	case reflect.Bool:
		fmt.Fprint(&e.b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(&e.b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		fmt.Fprint(&e.b, v.Uint())
	case reflect.Float32, reflect.Float64:
		fmt.Fprintf(&e.b, "%b", v.Float())
	case reflect.Complex64, reflect.Complex128:
		c := v.Complex()
		fmt.Fprintf(&e.b, "(%b,%b)", real(c), imag(c))
	case reflect.String:
		fmt.Fprintf(&e.b, "%q", v.String())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			e.b.WriteString("nil")
			return
		}
		e.own = fmt.Sprintf("it holds a %s (%s), which cannot be compared", v.Kind(), where)
	default:
		e.own = fmt.Sprintf("it holds a %s (%s), which digests do not read", v.Kind(), where)
	}
}

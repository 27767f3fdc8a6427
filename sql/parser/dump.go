package parser

import (
	"fmt"
	"reflect"
	"strings"
)

// Dump prints a tree for debugging and tests: one node per line with its
// type and position, then its non-empty fields, indented.
func Dump(n Node) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(n), 0)
	return b.String()
}

var (
	posType    = reflect.TypeOf(Pos{})
	identsType = reflect.TypeOf([]*Ident(nil))
)

func dumpValue(b *strings.Builder, v reflect.Value, indent int) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpValue(b, v.Elem(), indent)
	case reflect.Struct:
		t := v.Type()
		if t == posType {
			fmt.Fprint(b, v.Interface())
			return
		}
		if t == reflect.TypeOf(Ident{}) {
			fmt.Fprintf(b, "%s @%s", QuoteIdent(v.Field(1).String()), v.Field(0).Interface())
			return
		}
		b.WriteString(t.Name())
		for i := 0; i < t.NumField(); i++ {
			f := v.Field(i)
			if t.Field(i).Type == posType && t.Field(i).Anonymous {
				fmt.Fprintf(b, " @%s", f.Interface())
				continue
			}
			if f.IsZero() {
				continue
			}
			fmt.Fprintf(b, "\n%s%s:", strings.Repeat("  ", indent+1), t.Field(i).Name)
			if f.Kind() != reflect.Slice || f.Type() == identsType || f.Type().Elem().Kind() == reflect.Int {
				b.WriteString(" ")
			}
			dumpValue(b, f, indent+1)
		}
	case reflect.Slice:
		if v.Type() == identsType {
			b.WriteString("[")
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				dumpValue(b, v.Index(i), indent)
			}
			b.WriteString("]")
			return
		}
		if v.Type().Elem().Kind() == reflect.Int {
			fmt.Fprint(b, v.Interface())
			return
		}
		for i := 0; i < v.Len(); i++ {
			fmt.Fprintf(b, "\n%s- ", strings.Repeat("  ", indent+1))
			dumpValue(b, v.Index(i), indent+1)
		}
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	default:
		if s, ok := v.Interface().(fmt.Stringer); ok {
			b.WriteString(s.String())
			return
		}
		fmt.Fprint(b, v.Interface())
	}
}

// String names the column kind.
func (k ColumnKind) String() string {
	return [...]string{"physical", "computed", "metadata"}[k]
}

// String names the set operation.
func (k SetOpKind) String() string { return [...]string{"UNION", "INTERSECT", "EXCEPT"}[k] }

// String names the join kind.
func (k JoinKind) String() string {
	return [...]string{"INNER", "LEFT", "RIGHT", "FULL", "CROSS", "COMMA"}[k]
}

// String names the call syntax.
func (s FuncSyntax) String() string {
	return [...]string{"call", "position", "substring", "overlay", "floor-to"}[s]
}

// String names the frame bound kind.
func (k FrameBoundKind) String() string {
	return [...]string{"UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING"}[k]
}

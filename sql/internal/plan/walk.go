package plan

import (
	"reflect"

	"github.com/eddystream/eddy/sql/parser"
)

var nodeType = reflect.TypeFor[parser.Node]()

// walkSyntax calls fn on n and on every syntax node below it, depth first,
// descending into a node's children while fn returns true.
func walkSyntax(n parser.Node, fn func(parser.Node) bool) {
	if n == nil || reflect.ValueOf(n).IsNil() || !fn(n) {
		return
	}
	walkValue(reflect.ValueOf(n).Elem(), fn)
}

func walkValue(v reflect.Value, fn func(parser.Node) bool) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			walkValue(v.Field(i), fn)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkValue(v.Index(i), fn)
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return
		}
		if v.Type().Implements(nodeType) {
			walkSyntax(v.Interface().(parser.Node), fn)
			return
		}
		if v.Kind() == reflect.Interface {
			walkValue(v.Elem(), fn)
		}
	}
}

// walkRels calls fn on every relation under the roots, once each, parents
// before their inputs; fn returns whether to go on into r's inputs.
func walkRels(roots []Rel, fn func(r Rel) bool) {
	seen := map[Rel]bool{}
	var walk func(r Rel)
	walk = func(r Rel) {
		if seen[r] {
			return
		}
		seen[r] = true
		if !fn(r) {
			return
		}
		for _, in := range r.Inputs() {
			walk(in)
		}
	}
	for _, r := range roots {
		walk(r)
	}
}

package parser

import (
	"fmt"
	"reflect"
	"testing"
)

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// equalTrees compares two trees (through pointers, slices and interfaces)
// ignoring every Pos.
func equalTrees(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Elem().Type() != b.Elem().Type() {
			return false
		}
		return equalTrees(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !equalTrees(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == reflect.TypeOf(Pos{}) {
			return true
		}
		for i := 0; i < a.NumField(); i++ {
			if !equalTrees(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default:
		return a.Interface() == b.Interface()
	}
}

func sameTree(a, b any) bool { return equalTrees(reflect.ValueOf(a), reflect.ValueOf(b)) }

// roundTrip checks that the canonical form of stmts parses back to the same
// tree, and that the canonical form is a fixed point. It returns an error
// describing the first difference.
func roundTrip(stmts []Statement) error {
	text := FormatScript(stmts)
	again, err := Parse(text)
	if err != nil {
		return fmt.Errorf("canonical form does not parse: %v\ncanonical form:\n%s", err, text)
	}
	if text2 := FormatScript(again); text2 != text {
		return fmt.Errorf("canonical form is not stable:\nfirst:\n%s\nsecond:\n%s", text, text2)
	}
	if !sameTree(stmts, again) {
		for i := range stmts {
			if i < len(again) && !sameTree(stmts[i], again[i]) {
				return fmt.Errorf("statement %d parses back to another tree:\n%s\nfirst:\n%s\nsecond:\n%s",
					i+1, Format(stmts[i]), Dump(stmts[i]), Dump(again[i]))
			}
		}
		return fmt.Errorf("canonical form parses back to another tree:\n%s", text)
	}
	return nil
}

func checkRoundTrip(t *testing.T, src string, stmts []Statement) {
	t.Helper()
	if err := roundTrip(stmts); err != nil {
		t.Errorf("round trip of\n%s\n%v", src, err)
	}
}

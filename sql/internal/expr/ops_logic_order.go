package expr

// The operands of AND and OR are evaluated cheaper first where that cannot
// change what the query does. The three-valued AND and OR are commutative,
// so the order changes their value only through an operand that raises an
// error (a cast, an overflow) or has an effect (a volatile call): both
// operands must be of calls that never raise one. Among those, a regular
// expression costs a scan of the string, a comparison a few instructions:
// Nexmark q21's "REGEXP_EXTRACT(url, ...) IS NOT NULL OR LOWER(channel) IN
// (...)" then runs the expression only for the rows of the channels not
// listed, as its Go version does.

// errorFreeCalls are the built-ins that never raise an error, whatever
// their arguments' values.
var errorFreeCalls = map[string]bool{
	"=": true, "<>": true, "<": true, "<=": true, ">": true, ">=": true,
	"IS NULL": true, "IS NOT NULL": true, "NOT": true, "AND": true, "OR": true,
	"LOWER": true, "UPPER": true,
	// Only with a constant pattern (see errorFree), which the query
	// compiles once.
	"REGEXP": true, "REGEXP_EXTRACT": true,
}

// costlyCalls are the built-ins that scan their argument's text.
var costlyCalls = map[string]bool{"REGEXP": true, "REGEXP_EXTRACT": true}

// errorFree tells whether evaluating e never raises an error and has no
// effect: it reads columns and constants, casts text to text and calls
// errorFreeCalls.
func errorFree(e Expr) bool {
	ok := true
	Walk(e, func(x Expr) bool {
		if !ok {
			// Walk goes on to the siblings of a node it stops at.
			return false
		}
		switch x := x.(type) {
		case *Column, *Field, *Literal:
		case *Cast:
			// Text to text pads or cuts; it never fails.
			ok = x.X.Type().IsString() && x.T.IsString()
		case *Call:
			_, constPattern := argAt(x, 1).(*Literal)
			ok = errorFreeCalls[x.Name] && x.Fn != nil && x.Fn == builtinFunc(x.Name) && !x.Fn.Volatile &&
				(!costlyCalls[x.Name] || constPattern)
		default:
			ok = false
		}
		return ok
	})
	return ok
}

// argAt returns argument i of c, nil if it has fewer.
func argAt(c *Call, i int) Expr {
	if i < len(c.Args) {
		return c.Args[i]
	}
	return nil
}

// costly tells whether e calls a costlyCalls built-in.
func costly(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Call); ok && costlyCalls[c.Name] {
			found = true
		}
		return !found
	})
	return found
}

// costlyFirst tells whether the AND or OR c is better evaluated second
// operand first: the first is costly, the second is not, and both are
// error-free.
func costlyFirst(c *Call) bool {
	return len(c.Args) == 2 && costly(c.Args[0]) && !costly(c.Args[1]) && errorFree(c.Args[0]) && errorFree(c.Args[1])
}

package parser

import "strings"

// exprPrec returns the precedence level of an expression's outermost
// operator (precPrimary for operands that need no parentheses).
func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch e.Op {
		case "OR":
			return precOr
		case "AND":
			return precAnd
		case "=", "<>", "<", "<=", ">", ">=", "!=":
			return precCmp
		case "+", "-":
			return precAdd
		default:
			return precMul
		}
	case *Unary:
		if e.Op == "NOT" {
			return precNot
		}
		return precUnary
	case *IsExpr:
		return precIs
	case *DistinctFrom:
		return precCmp
	case *Between, *InList, *InQuery, *Like:
		return precPred
	case *NamedArg, *TableArg:
		return 0
	}
	return precPrimary
}

func (w *printer) exprs(es []Expr) {
	for i, e := range es {
		if i > 0 {
			w.s(", ")
		}
		w.expr(e, 0)
	}
}

// expr prints e, in parentheses if its precedence is below min.
func (w *printer) expr(e Expr, min int) {
	if exprPrec(e) < min {
		w.s("(")
		w.expr(e, 0)
		w.s(")")
		return
	}
	switch e := e.(type) {
	case *Ref:
		w.dotted(e.Parts)
	case *NumberLit:
		w.s(e.Text)
	case *StringLit:
		w.str(e)
	case *BinaryLit:
		w.s("X'" + e.Hex + "'")
	case *BoolLit:
		if e.Value {
			w.s("TRUE")
		} else {
			w.s("FALSE")
		}
	case *NullLit:
		w.s("NULL")
	case *UnknownLit:
		w.s("UNKNOWN")
	case *TypedLit:
		w.s(e.Type + " " + quoteString(e.Value))
	case *IntervalLit:
		w.s("INTERVAL ")
		if e.Negative {
			w.s("-")
		}
		w.s(quoteString(e.Value) + " ")
		w.qualifier(e.Qualifier)
	case *Param:
		w.s("?")
	case *Unary:
		w.unary(e)
	case *Binary:
		lvl := exprPrec(e)
		w.expr(e.L, lvl)
		w.s(" " + e.Op + " ")
		w.expr(e.R, lvl+1)
	case *IsExpr:
		w.expr(e.X, precIs)
		w.s(" IS ")
		if e.Not {
			w.s("NOT ")
		}
		w.s(e.What)
	case *DistinctFrom:
		w.expr(e.L, precCmp)
		w.s(" IS ")
		if e.Not {
			w.s("NOT ")
		}
		w.s("DISTINCT FROM ")
		w.expr(e.R, precCmp+1)
	case *Between:
		w.expr(e.X, precPred)
		w.not(e.Not)
		w.s(" BETWEEN ")
		if e.Symmetric {
			w.s("SYMMETRIC ")
		}
		w.expr(e.Low, precAdd)
		w.s(" AND ")
		w.expr(e.High, precAdd)
	case *InList:
		w.expr(e.X, precPred)
		w.not(e.Not)
		w.s(" IN (")
		w.exprs(e.List)
		w.s(")")
	case *InQuery:
		w.expr(e.X, precPred)
		w.not(e.Not)
		w.s(" IN (")
		w.query(e.Query)
		w.s(")")
	case *Like:
		w.expr(e.X, precPred)
		w.not(e.Not)
		w.s(" " + e.Op + " ")
		w.expr(e.Pattern, precAdd)
		if e.Escape != nil {
			w.s(" ESCAPE ")
			w.expr(e.Escape, precAdd)
		}
	case *Exists:
		w.s("EXISTS (")
		w.query(e.Query)
		w.s(")")
	case *Subquery:
		w.s("(")
		w.query(e.Query)
		w.s(")")
	case *Case:
		w.s("CASE")
		if e.Operand != nil {
			w.s(" ")
			w.expr(e.Operand, 0)
		}
		for _, wh := range e.Whens {
			w.s(" WHEN ")
			w.expr(wh.Cond, 0)
			w.s(" THEN ")
			w.expr(wh.Result, 0)
		}
		if e.Else != nil {
			w.s(" ELSE ")
			w.expr(e.Else, 0)
		}
		w.s(" END")
	case *Cast:
		if e.Try {
			w.s("TRY_CAST(")
		} else {
			w.s("CAST(")
		}
		w.expr(e.X, 0)
		w.s(" AS ")
		w.typ(e.Type)
		w.s(")")
	case *FuncCall:
		w.call(e)
	case *Extract:
		w.s("EXTRACT(" + e.Unit + " FROM ")
		w.expr(e.X, 0)
		w.s(")")
	case *Trim:
		w.s("TRIM(")
		if e.Spec != "" {
			w.s(e.Spec + " ")
		}
		if e.Chars != nil {
			w.expr(e.Chars, 0)
			w.s(" ")
		}
		if e.Spec != "" || e.Chars != nil {
			w.s("FROM ")
		}
		w.expr(e.X, 0)
		w.s(")")
	case *TimeUnit:
		w.s(e.Unit)
	case *RowExpr:
		if e.Explicit {
			w.s("ROW")
		}
		w.s("(")
		w.exprs(e.Fields)
		w.s(")")
	case *ArrayExpr:
		w.s("ARRAY[")
		w.exprs(e.Elems)
		w.s("]")
	case *MapExpr:
		w.s("MAP[")
		w.exprs(e.Elems)
		w.s("]")
	case *Index:
		w.expr(e.X, precPrimary)
		w.s("[")
		w.expr(e.Index, 0)
		w.s("]")
	case *FieldAccess:
		switch e.X.(type) {
		case *Ref, *NumberLit:
			// A bare name would absorb the field into the Ref, a number
			// the dot.
			w.s("(")
			w.expr(e.X, 0)
			w.s(")")
		default:
			w.expr(e.X, precPrimary)
		}
		w.s(".")
		w.ident(e.Field)
	case *Descriptor:
		w.s("DESCRIPTOR(")
		w.idents(e.Columns)
		w.s(")")
	case *TableArg:
		w.s("TABLE ")
		w.objectName(e.Name)
		if len(e.PartitionBy) > 0 {
			w.s(" PARTITION BY ")
			w.exprsMaybeParen(e.PartitionBy)
		}
		if len(e.OrderBy) > 0 {
			w.s(" ORDER BY ")
			if len(e.OrderBy) == 1 {
				w.orderItem(e.OrderBy[0])
			} else {
				w.s("(")
				w.orderItems(e.OrderBy)
				w.s(")")
			}
		}
	case *NamedArg:
		w.ident(e.Name)
		w.s(" => ")
		w.expr(e.Value, 0)
	case *JSONFunc:
		w.json(e)
	case *GroupingSets:
		w.s(e.Kind + " (")
		w.exprs(e.Items)
		w.s(")")
	default:
		w.s("<?>")
	}
}

func (w *printer) not(not bool) {
	if not {
		w.s(" NOT")
	}
}

func (w *printer) unary(e *Unary) {
	if e.Op == "NOT" {
		w.s("NOT ")
		w.expr(e.X, precNot)
		return
	}
	var sub printer
	sub.expr(e.X, precUnary)
	x := sub.b.String()
	w.s(e.Op)
	if e.Op == "-" && strings.HasPrefix(x, "-") {
		// "--" would start a comment.
		w.s(" ")
	}
	w.s(x)
}

// exprsMaybeParen prints one expression as is, several in parentheses.
func (w *printer) exprsMaybeParen(es []Expr) {
	if len(es) == 1 {
		w.expr(es[0], 0)
		return
	}
	w.s("(")
	w.exprs(es)
	w.s(")")
}

// quoteFuncNames are function names that must be backquoted in a plain
// call, as the parser reads them as special forms when followed by "(".
var quoteFuncNames = map[string]bool{"ROLLUP": true, "CUBE": true}

func (w *printer) call(f *FuncCall) {
	if f.NoParens {
		w.s(upperASCII(f.Name.Last().Name))
		return
	}
	if len(f.Name.Parts) == 1 {
		name := f.Name.Parts[0].Name
		up := upperASCII(name)
		switch {
		case f.Syntax != SyntaxCall:
			w.s(up)
		case callableReserved[up]:
			w.s(name)
		case specialFuncs[up] || quoteFuncNames[up]:
			w.forceQuote(name)
		default:
			w.funcNamePart(name)
		}
	} else {
		for i, part := range f.Name.Parts {
			if i > 0 {
				w.s(".")
			}
			w.funcNamePart(part.Name)
		}
	}
	w.s("(")
	switch f.Syntax {
	case SyntaxPosition:
		w.expr(f.Args[0], precAdd)
		w.s(" IN ")
		w.expr(f.Args[1], 0)
		if len(f.Args) > 2 {
			w.s(" FROM ")
			w.expr(f.Args[2], 0)
		}
	case SyntaxSubstring, SyntaxOverlay:
		w.expr(f.Args[0], 0)
		rest := f.Args[1:]
		if f.Syntax == SyntaxOverlay {
			w.s(" PLACING ")
			w.expr(f.Args[1], 0)
			rest = f.Args[2:]
		}
		w.s(" FROM ")
		w.expr(rest[0], 0)
		if len(rest) > 1 {
			w.s(" FOR ")
			w.expr(rest[1], 0)
		}
	case SyntaxFloorTo:
		w.expr(f.Args[0], 0)
		w.s(" TO ")
		w.expr(f.Args[1], 0)
	default:
		if f.Star {
			w.s("*")
		}
		if f.Distinct {
			w.s("DISTINCT ")
		}
		up := upperASCII(f.Name.Last().Name)
		unitArg := len(f.Name.Parts) == 1 && (up == "TIMESTAMPADD" || up == "TIMESTAMPDIFF")
		for i, a := range f.Args {
			if i > 0 {
				w.s(", ")
			}
			if r, ok := a.(*Ref); ok && i == 0 && unitArg && len(r.Parts) == 1 && timeUnits[upperASCII(r.Parts[0].Name)] != "" {
				// A plain unit word there would be read as a *TimeUnit.
				w.forceQuote(r.Parts[0].Name)
				continue
			}
			w.expr(a, 0)
		}
	}
	w.s(")")
	if f.NullTreatment != "" {
		w.s(" " + f.NullTreatment)
	}
	if len(f.WithinGroup) > 0 {
		w.s(" WITHIN GROUP (ORDER BY ")
		w.orderItems(f.WithinGroup)
		w.s(")")
	}
	if f.Filter != nil {
		w.s(" FILTER (WHERE ")
		w.expr(f.Filter, 0)
		w.s(")")
	}
	if f.Over != nil {
		w.s(" OVER ")
		w.windowSpec(f.Over)
	} else if f.OverName != nil {
		w.s(" OVER ")
		w.ident(f.OverName)
	}
}

// funcNamePart prints a part of a function name. Function names that are
// reserved words in Flink are its built-in functions (COUNT, SUM, ...), so
// only eddy's parser decides the quoting.
func (w *printer) funcNamePart(name string) {
	if needsQuoteHere(name) {
		w.forceQuote(name)
		return
	}
	w.s(name)
}

func (w *printer) qualifier(q *IntervalQualifier) {
	w.s(q.Start)
	w.params(q.StartParams)
	if q.End != "" {
		w.s(" TO " + q.End)
		w.params(q.EndParams)
	}
}

func (w *printer) params(ps []int) {
	if len(ps) == 0 {
		return
	}
	w.s("(")
	for i, n := range ps {
		if i > 0 {
			w.s(", ")
		}
		w.s(itoa(n))
	}
	w.s(")")
}

func (w *printer) json(f *JSONFunc) {
	w.s(f.Name + "(")
	sep := ""
	for _, a := range f.Args {
		w.s(sep)
		w.expr(a, 0)
		sep = ", "
	}
	for _, kv := range f.Pairs {
		w.s(sep)
		w.keyValue(kv)
		sep = ", "
	}
	if len(f.OrderBy) > 0 {
		w.s(" ORDER BY ")
		w.orderItems(f.OrderBy)
	}
	if f.Returning != nil {
		w.s(" RETURNING ")
		w.typ(f.Returning)
	}
	if f.Wrapper != "" {
		w.s(" " + f.Wrapper)
	}
	if f.OnEmpty != nil {
		w.s(" ")
		w.behavior(f.OnEmpty)
		w.s(" ON EMPTY")
	}
	if f.OnError != nil {
		w.s(" ")
		w.behavior(f.OnError)
		w.s(" ON ERROR")
	}
	if f.OnNull != "" {
		if len(f.Args) > 0 || len(f.Pairs) > 0 {
			w.s(" ")
		}
		w.s(f.OnNull + " ON NULL")
	}
	w.s(")")
}

func (w *printer) behavior(b *JSONBehavior) {
	w.s(b.Kind)
	if b.Default != nil {
		w.s(" ")
		w.expr(b.Default, 0)
	}
}

func (w *printer) keyValue(kv *JSONKeyValue) {
	if kv.KeyWord {
		w.s("KEY ")
	}
	if r, ok := kv.Key.(*Ref); ok && len(r.Parts) == 1 {
		// A plain KEY or VALUE there would be read as a keyword.
		if up := upperASCII(r.Parts[0].Name); up == "KEY" || up == "VALUE" {
			w.forceQuote(r.Parts[0].Name)
			w.s(" VALUE ")
			w.expr(kv.Value, 0)
			return
		}
	}
	w.expr(kv.Key, 0)
	w.s(" VALUE ")
	w.expr(kv.Value, 0)
}

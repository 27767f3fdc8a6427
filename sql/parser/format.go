package parser

import (
	"strings"
)

// Format prints a node as canonical SQL: keywords in upper case,
// identifiers backquoted only when needed (by eddy or by Flink), parentheses only where the
// precedence of operators requires them, optional noise words (OUTER, AS
// before a table alias is kept, ASC is kept as written) normalised. Parsing
// the result gives the same tree, positions aside.
func Format(n Node) string {
	var w printer
	w.node(n)
	return w.b.String()
}

// FormatScript prints statements as a script, one per line, each ended by
// ";".
func FormatScript(stmts []Statement) string {
	var w printer
	for _, s := range stmts {
		w.node(s)
		w.s(";\n")
	}
	return w.b.String()
}

type printer struct {
	b strings.Builder
}

func (w *printer) s(s string) { w.b.WriteString(s) }

// QuoteIdent returns name as it must be written in SQL: as is when it is a
// plain identifier that is not a reserved word of eddy or of Flink, else in
// backquotes.
func QuoteIdent(name string) string {
	if !needsQuote(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func needsQuote(name string) bool {
	return needsQuoteHere(name) || flinkReserved[upperASCII(name)]
}

// needsQuoteHere reports whether eddy's parser needs name backquoted: it is
// not a plain identifier, or it is reserved.
func needsQuoteHere(name string) bool {
	if name == "" {
		return true
	}
	for i, r := range name {
		if i == 0 {
			if !isIdentStart(r) {
				return true
			}
		} else if !isIdentPart(r) {
			return true
		}
	}
	return reserved[upperASCII(name)]
}

func (w *printer) ident(id *Ident) { w.s(QuoteIdent(id.Name)) }

// forceQuote prints a name in backquotes even when it is a plain word:
// where the parser would read the plain word as a keyword.
func (w *printer) forceQuote(name string) {
	w.s("`" + strings.ReplaceAll(name, "`", "``") + "`")
}

func (w *printer) idents(ids []*Ident) {
	for i, id := range ids {
		if i > 0 {
			w.s(", ")
		}
		w.ident(id)
	}
}

func (w *printer) dotted(ids []*Ident) {
	for i, id := range ids {
		if i > 0 {
			w.s(".")
		}
		w.ident(id)
	}
}

func (w *printer) objectName(n *ObjectName) { w.dotted(n.Parts) }

func (w *printer) str(s *StringLit) {
	if s.National {
		w.s("N")
	}
	w.s(quoteString(s.Value))
}

func (w *printer) node(n Node) {
	switch n := n.(type) {
	case *Query:
		w.query(n)
	case Statement:
		w.statement(n)
	case Expr:
		w.expr(n, 0)
	case TableExpr:
		w.table(n)
	case QueryBody:
		w.queryBody(n, 0)
	case *Type:
		w.typ(n)
	case *Ident:
		w.ident(n)
	case *ObjectName:
		w.objectName(n)
	case *ColumnDef:
		w.column(n)
	case *Watermark:
		w.watermark(n)
	case *TableConstraint:
		w.constraint(n)
	case *Option:
		w.option(n)
	case *PartitionValue:
		w.ident(n.Column)
		w.s(" = ")
		w.expr(n.Value, 0)
	case *CTE:
		w.cte(n)
	case *SelectItem:
		w.selectItem(n)
	case *NamedWindow:
		w.ident(n.Name)
		w.s(" AS ")
		w.windowSpec(n.Spec)
	case *OrderItem:
		w.orderItem(n)
	case *TableAlias:
		w.alias(n)
	case *When:
		w.s("WHEN ")
		w.expr(n.Cond, 0)
		w.s(" THEN ")
		w.expr(n.Result, 0)
	case *WindowSpec:
		w.windowSpec(n)
	case *WindowFrame:
		w.frame(n)
	case *FrameBound:
		w.bound(n)
	case *IntervalQualifier:
		w.qualifier(n)
	case *JSONBehavior:
		w.behavior(n)
	case *JSONKeyValue:
		w.keyValue(n)
	case *FieldDef:
		w.field(n)
	case *Hint:
		w.hint(n)
	default:
		w.s("<?>")
	}
}

package parser

// query prints a query (without surrounding parentheses).
func (w *printer) query(q *Query) {
	if len(q.With) > 0 {
		w.s("WITH ")
		for i, c := range q.With {
			if i > 0 {
				w.s(", ")
			}
			w.cte(c)
		}
		w.s(" ")
	}
	w.queryBody(q.Body, 0)
	if len(q.OrderBy) > 0 {
		w.s(" ORDER BY ")
		w.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		w.s(" LIMIT ")
		w.expr(q.Limit, precAdd)
	}
	if q.Offset != nil {
		w.s(" OFFSET ")
		w.expr(q.Offset, precAdd)
	}
}

func (w *printer) cte(c *CTE) {
	w.ident(c.Name)
	if len(c.Columns) > 0 {
		w.s(" (")
		w.idents(c.Columns)
		w.s(")")
	}
	w.s(" AS (")
	w.query(c.Query)
	w.s(")")
}

// setOpLevel is the precedence of a set operation (INTERSECT binds
// tighter), or 3 for other bodies.
func setOpLevel(b QueryBody) int {
	if s, ok := b.(*SetOp); ok {
		if s.Op == Intersect {
			return 2
		}
		return 1
	}
	return 3
}

// queryBody prints a body, in parentheses if its level is below min.
func (w *printer) queryBody(b QueryBody, min int) {
	if setOpLevel(b) < min {
		w.s("(")
		w.queryBody(b, 0)
		w.s(")")
		return
	}
	switch b := b.(type) {
	case *Select:
		w.selectStmt(b)
	case *SetOp:
		lvl := setOpLevel(b)
		w.queryBody(b.Left, lvl)
		switch b.Op {
		case Union:
			w.s(" UNION ")
		case Intersect:
			w.s(" INTERSECT ")
		case Except:
			w.s(" EXCEPT ")
		}
		if b.All {
			w.s("ALL ")
		}
		w.queryBody(b.Right, lvl+1)
	case *Values:
		w.s("VALUES ")
		for i, row := range b.Rows {
			if i > 0 {
				w.s(", ")
			}
			w.s("(")
			w.exprs(row)
			w.s(")")
		}
	case *Query:
		w.s("(")
		w.query(b)
		w.s(")")
	}
}

func (w *printer) selectStmt(s *Select) {
	w.s("SELECT ")
	if len(s.Hints) > 0 {
		w.hints(s.Hints)
		w.s(" ")
	}
	if s.Distinct {
		w.s("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			w.s(", ")
		}
		w.selectItem(it)
	}
	if s.From != nil {
		w.s(" FROM ")
		w.table(s.From)
	}
	if s.Where != nil {
		w.s(" WHERE ")
		w.expr(s.Where, 0)
	}
	if len(s.GroupBy) > 0 {
		w.s(" GROUP BY ")
		w.exprs(s.GroupBy)
	}
	if s.Having != nil {
		w.s(" HAVING ")
		w.expr(s.Having, 0)
	}
	for i, nw := range s.Windows {
		if i == 0 {
			w.s(" WINDOW ")
		} else {
			w.s(", ")
		}
		w.ident(nw.Name)
		w.s(" AS ")
		w.windowSpec(nw.Spec)
	}
}

func (w *printer) selectItem(it *SelectItem) {
	if it.Star {
		for _, q := range it.Qualifier {
			w.ident(q)
			w.s(".")
		}
		w.s("*")
		return
	}
	w.expr(it.Expr, 0)
	if it.Alias != nil {
		w.s(" AS ")
		w.ident(it.Alias)
	}
}

func (w *printer) orderItems(items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			w.s(", ")
		}
		w.orderItem(o)
	}
}

func (w *printer) orderItem(o *OrderItem) {
	w.expr(o.Expr, 0)
	if o.Desc {
		w.s(" DESC")
	} else if o.Asc {
		w.s(" ASC")
	}
	if o.Nulls != "" {
		w.s(" NULLS " + o.Nulls)
	}
}

func (w *printer) alias(a *TableAlias) {
	if a == nil {
		return
	}
	w.s(" AS ")
	w.ident(a.Name)
	if len(a.Columns) > 0 {
		w.s(" (")
		w.idents(a.Columns)
		w.s(")")
	}
}

func (w *printer) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		w.objectName(t.Name)
		if len(t.Hints) > 0 {
			w.s(" ")
			w.hints(t.Hints)
		}
		if t.SystemTime != nil {
			w.s(" FOR SYSTEM_TIME AS OF ")
			w.expr(t.SystemTime, precAdd)
		}
		w.alias(t.Alias)
	case *DerivedTable:
		if t.Lateral {
			w.s("LATERAL ")
		}
		w.s("(")
		w.query(t.Query)
		w.s(")")
		w.alias(t.Alias)
	case *TableFunction:
		if t.Lateral {
			w.s("LATERAL ")
		}
		w.s("TABLE(")
		w.expr(t.Call, 0)
		w.s(")")
		w.alias(t.Alias)
	case *Unnest:
		w.s("UNNEST(")
		w.exprs(t.Args)
		w.s(")")
		if t.WithOrdinality {
			w.s(" WITH ORDINALITY")
		}
		w.alias(t.Alias)
	case *Join:
		w.table(t.Left)
		switch t.Kind {
		case CommaJoin:
			w.s(", ")
			w.joinRight(t.Right)
			return
		case CrossJoin:
			w.s(" CROSS JOIN ")
			w.joinRight(t.Right)
			return
		}
		if t.Natural {
			w.s(" NATURAL")
		}
		switch t.Kind {
		case InnerJoin:
			w.s(" JOIN ")
		case LeftJoin:
			w.s(" LEFT JOIN ")
		case RightJoin:
			w.s(" RIGHT JOIN ")
		case FullJoin:
			w.s(" FULL JOIN ")
		}
		w.joinRight(t.Right)
		if t.On != nil {
			w.s(" ON ")
			w.expr(t.On, 0)
		}
		if len(t.Using) > 0 {
			w.s(" USING (")
			w.idents(t.Using)
			w.s(")")
		}
	case *ParenTable:
		w.s("(")
		w.table(t.Table)
		w.s(")")
		w.alias(t.Alias)
	}
}

// joinRight prints the right side of a join, in parentheses if it is a join
// itself (joins are left associative).
func (w *printer) joinRight(t TableExpr) {
	if j, ok := t.(*Join); ok {
		w.s("(")
		w.table(j)
		w.s(")")
		return
	}
	w.table(t)
}

func (w *printer) windowSpec(s *WindowSpec) {
	w.s("(")
	sep := ""
	if s.Base != nil {
		if up := upperASCII(s.Base.Name); up == "ROWS" || up == "RANGE" {
			w.forceQuote(s.Base.Name)
		} else {
			w.ident(s.Base)
		}
		sep = " "
	}
	if len(s.PartitionBy) > 0 {
		w.s(sep + "PARTITION BY ")
		w.exprs(s.PartitionBy)
		sep = " "
	}
	if len(s.OrderBy) > 0 {
		w.s(sep + "ORDER BY ")
		w.orderItems(s.OrderBy)
		sep = " "
	}
	if s.Frame != nil {
		w.s(sep)
		w.frame(s.Frame)
	}
	w.s(")")
}

func (w *printer) frame(f *WindowFrame) {
	w.s(f.Units + " ")
	if f.End != nil {
		w.s("BETWEEN ")
		w.bound(f.Start)
		w.s(" AND ")
		w.bound(f.End)
		return
	}
	w.bound(f.Start)
}

func (w *printer) bound(b *FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		w.s("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		w.s("UNBOUNDED FOLLOWING")
	case CurrentRow:
		w.s("CURRENT ROW")
	case Preceding:
		w.expr(b.Offset, precAdd)
		w.s(" PRECEDING")
	case Following:
		w.expr(b.Offset, precAdd)
		w.s(" FOLLOWING")
	}
}

func (w *printer) hints(hs []*Hint) {
	w.s("/*+ ")
	for i, h := range hs {
		if i > 0 {
			w.s(", ")
		}
		w.hint(h)
	}
	w.s(" */")
}

func (w *printer) hint(h *Hint) {
	w.ident(h.Name)
	if len(h.Args) == 0 && len(h.Options) == 0 {
		return
	}
	w.s("(")
	sep := ""
	for _, a := range h.Args {
		w.s(sep)
		w.expr(a, 0)
		sep = ", "
	}
	for _, o := range h.Options {
		w.s(sep)
		w.option(o)
		sep = ", "
	}
	w.s(")")
}

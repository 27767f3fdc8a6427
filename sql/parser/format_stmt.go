package parser

func (w *printer) statement(s Statement) {
	switch s := s.(type) {
	case *CreateTable:
		w.createTable(s)
	case *CreateView:
		w.s("CREATE ")
		if s.Temporary {
			w.s("TEMPORARY ")
		}
		w.s("VIEW ")
		if s.IfNotExists {
			w.s("IF NOT EXISTS ")
		}
		w.objectName(s.Name)
		if len(s.Columns) > 0 {
			w.s(" (")
			w.idents(s.Columns)
			w.s(")")
		}
		if s.Comment != nil {
			w.s(" COMMENT ")
			w.str(s.Comment)
		}
		w.s(" AS ")
		w.query(s.Query)
	case *CreateFunction:
		w.s("CREATE ")
		if s.Temporary {
			w.s("TEMPORARY ")
		}
		if s.System {
			w.s("SYSTEM ")
		}
		w.s("FUNCTION ")
		if s.IfNotExists {
			w.s("IF NOT EXISTS ")
		}
		w.objectName(s.Name)
		w.s(" AS ")
		w.str(s.Identifier)
		if s.Language != "" {
			w.s(" LANGUAGE " + s.Language)
		}
		for i, j := range s.Jars {
			if i == 0 {
				w.s(" USING ")
			} else {
				w.s(", ")
			}
			w.s("JAR ")
			w.str(j)
		}
	case *Drop:
		w.s("DROP ")
		if s.Temporary {
			w.s("TEMPORARY ")
		}
		if s.System {
			w.s("SYSTEM ")
		}
		w.s(s.What + " ")
		if s.IfExists {
			w.s("IF EXISTS ")
		}
		w.objectName(s.Name)
	case *Set:
		w.s("SET")
		if s.Option != nil {
			w.s(" ")
			w.option(s.Option)
		}
	case *Reset:
		w.s("RESET")
		if s.Key != nil {
			w.s(" ")
			w.str(s.Key)
		}
	case *Insert:
		w.insert(s)
	case *StatementSet:
		if s.Begin {
			w.s("BEGIN STATEMENT SET;")
		} else {
			w.s("EXECUTE STATEMENT SET BEGIN")
		}
		for _, ins := range s.Inserts {
			w.s(" ")
			w.insert(ins)
			w.s(";")
		}
		w.s(" END")
	case *Execute:
		w.s("EXECUTE ")
		w.statement(s.Statement)
	case *Explain:
		w.s("EXPLAIN ")
		for i, d := range s.Details {
			if i > 0 {
				w.s(", ")
			}
			w.s(d)
		}
		if len(s.Details) > 0 {
			w.s(" ")
		}
		if s.PlanFor {
			w.s("PLAN FOR ")
		}
		w.statement(s.Statement)
	case *Show:
		w.s("SHOW " + s.What)
		if s.From != nil {
			w.s(" " + s.FromIn + " ")
			w.objectName(s.From)
		}
		if s.Like != nil {
			if s.NotLike {
				w.s(" NOT")
			}
			if s.ILike {
				w.s(" ILIKE ")
			} else {
				w.s(" LIKE ")
			}
			w.str(s.Like)
		}
	case *ShowCreate:
		w.s("SHOW CREATE " + s.What + " ")
		w.objectName(s.Name)
	case *Describe:
		w.s("DESCRIBE ")
		if s.Extended {
			w.s("EXTENDED ")
		}
		w.objectName(s.Name)
	case *Use:
		w.s("USE ")
		if s.What != "" {
			w.s(s.What + " ")
		}
		for i, n := range s.Names {
			if i > 0 {
				w.s(", ")
			}
			w.objectName(n)
		}
	case *QueryStatement:
		w.query(s.Query)
	}
}

func (w *printer) createTable(s *CreateTable) {
	w.s("CREATE ")
	if s.Temporary {
		w.s("TEMPORARY ")
	}
	w.s("TABLE ")
	if s.IfNotExists {
		w.s("IF NOT EXISTS ")
	}
	w.objectName(s.Name)
	n := 0
	sep := func() {
		if n == 0 {
			w.s(" (")
		} else {
			w.s(", ")
		}
		n++
	}
	for _, c := range s.Columns {
		sep()
		w.column(c)
	}
	for _, wm := range s.Watermarks {
		sep()
		w.watermark(wm)
	}
	for _, c := range s.Constraints {
		sep()
		w.constraint(c)
	}
	if n > 0 {
		w.s(")")
	}
	if s.Comment != nil {
		w.s(" COMMENT ")
		w.str(s.Comment)
	}
	if len(s.PartitionBy) > 0 {
		w.s(" PARTITIONED BY (")
		w.idents(s.PartitionBy)
		w.s(")")
	}
	if len(s.Options) > 0 || (n == 0 && s.AsQuery == nil) {
		w.s(" WITH (")
		for i, o := range s.Options {
			if i > 0 {
				w.s(", ")
			}
			w.option(o)
		}
		w.s(")")
	}
	if s.AsQuery != nil {
		w.s(" AS ")
		w.query(s.AsQuery)
	}
}

func (w *printer) column(c *ColumnDef) {
	w.ident(c.Name)
	if c.Kind == ComputedColumn {
		w.s(" AS ")
		w.expr(c.Expr, 0)
	} else {
		w.s(" ")
		w.typ(c.Type)
		if c.Kind == MetadataColumn {
			w.s(" METADATA")
			if c.MetadataKey != nil {
				w.s(" FROM ")
				w.str(c.MetadataKey)
			}
			if c.Virtual {
				w.s(" VIRTUAL")
			}
		}
		if c.PrimaryKey != nil {
			w.s(" ")
			w.constraint(c.PrimaryKey)
		}
	}
	if c.Comment != nil {
		w.s(" COMMENT ")
		w.str(c.Comment)
	}
}

func (w *printer) watermark(wm *Watermark) {
	w.s("WATERMARK FOR ")
	w.dotted(wm.Column)
	w.s(" AS ")
	w.expr(wm.Expr, 0)
}

func (w *printer) constraint(c *TableConstraint) {
	if c.Name != nil {
		w.s("CONSTRAINT ")
		w.ident(c.Name)
		w.s(" ")
	}
	w.s("PRIMARY KEY")
	if len(c.Columns) > 0 {
		w.s(" (")
		w.idents(c.Columns)
		w.s(")")
	}
	if c.NotEnforced {
		w.s(" NOT ENFORCED")
	}
}

func (w *printer) option(o *Option) {
	w.s(quoteString(o.Key))
	w.s(" = ")
	w.s(quoteString(o.Value))
}

func (w *printer) insert(s *Insert) {
	if s.Overwrite {
		w.s("INSERT OVERWRITE ")
	} else {
		w.s("INSERT INTO ")
	}
	w.objectName(s.Table)
	if len(s.Hints) > 0 {
		w.s(" ")
		w.hints(s.Hints)
	}
	if len(s.Partition) > 0 {
		w.s(" PARTITION (")
		for i, pv := range s.Partition {
			if i > 0 {
				w.s(", ")
			}
			w.ident(pv.Column)
			w.s(" = ")
			w.expr(pv.Value, 0)
		}
		w.s(")")
	}
	if len(s.Columns) > 0 {
		w.s(" (")
		w.idents(s.Columns)
		w.s(")")
	}
	w.s(" ")
	w.query(s.Query)
}

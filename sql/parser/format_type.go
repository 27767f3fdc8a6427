package parser

import "strconv"

func itoa(n int) string { return strconv.Itoa(n) }

func (w *printer) typ(t *Type) {
	switch {
	case t.Named != nil:
		if len(t.Named.Parts) == 1 && isTypeKeyword(t.Named.Parts[0].Name) {
			// A plain built-in name would be read as that type.
			w.forceQuote(t.Named.Parts[0].Name)
		} else {
			w.objectName(t.Named)
		}
	case t.Interval != nil:
		w.s("INTERVAL ")
		w.qualifier(t.Interval)
	case (t.Name == "ARRAY" || t.Name == "MULTISET") && t.Elem != nil:
		w.s(t.Name + "<")
		w.typ(t.Elem)
		w.s(">")
	case t.Name == "MAP" && t.Key != nil && t.Elem != nil:
		w.s("MAP<")
		w.typ(t.Key)
		w.s(", ")
		w.typ(t.Elem)
		w.s(">")
	case t.Name == "ROW":
		w.s("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				w.s(", ")
			}
			w.field(f)
		}
		w.s(">")
	case t.Name == "RAW":
		w.s("RAW(")
		for i, a := range t.RawArgs {
			if i > 0 {
				w.s(", ")
			}
			w.str(a)
		}
		w.s(")")
	default:
		w.s(t.Name)
		w.params(t.Params)
		if t.Zone != "" {
			w.s(" " + t.Zone)
		}
	}
	if t.NotNull {
		w.s(" NOT NULL")
	}
}

func (w *printer) field(f *FieldDef) {
	w.ident(f.Name)
	w.s(" ")
	w.typ(f.Type)
	if f.Comment != nil {
		w.s(" ")
		w.str(f.Comment)
	}
}

// isTypeKeyword reports whether name (in any case) starts a built-in type.
func isTypeKeyword(name string) bool {
	up := upperASCII(name)
	if _, ok := typeNames[up]; ok {
		return true
	}
	switch up {
	case "DOUBLE", "CHAR", "CHARACTER", "BINARY", "TIME", "TIMESTAMP", "INTERVAL",
		"ARRAY", "MULTISET", "MAP", "ROW", "RAW", "NULL":
		return true
	}
	return false
}

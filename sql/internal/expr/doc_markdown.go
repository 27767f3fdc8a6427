package expr

import (
	"strings"
	"unicode"
)

// Markdown renders the reference of the registry's functions and
// operators: a table of each, sorted by name, from their Doc lines.
func (r *Registry) Markdown() string {
	var ops, fns []*Builtin
	for _, name := range r.Names() {
		b := r.funcs[name]
		if isFunctionName(name) {
			fns = append(fns, b)
		} else {
			ops = append(ops, b)
		}
	}
	var sb strings.Builder
	table := func(title, intro string, bs []*Builtin) {
		sb.WriteString("## " + title + "\n\n" + intro + "\n\n| Name | Signature and meaning |\n|---|---|\n")
		for _, b := range bs {
			sb.WriteString("| `" + mdEscape(b.Name) + "` | " + mdEscape(b.Doc) + " |\n")
		}
		sb.WriteString("\n")
	}
	table("Operators", "Operators written between or after their operands (the name of NEGATE is unary minus, ITEM is written a[i]).", ops)
	table("Functions", "Scalar functions called by name; names are case-insensitive.", fns)
	return strings.TrimRight(sb.String(), "\n") + "\n"
}

func isFunctionName(name string) bool {
	if strings.HasPrefix(name, "IS ") || name == "LIKE" || name == "ILIKE" || name == "SIMILAR TO" || name == "AND" || name == "OR" || name == "NOT" || name == "NEGATE" {
		return false
	}
	for _, r := range name {
		if !(unicode.IsUpper(r) || unicode.IsDigit(r) || r == '_') {
			return false
		}
	}
	return true
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

package connector

import (
	"fmt"
	"strings"
)

// Markdown renders the reference documentation of every connector and
// format in r: for each, its name, what it makes, its description, the
// formats it takes, and a table of its options (key, type, default,
// whether it is required or secret, and description). The output starts
// with a "## Connectors" heading, then "## Formats"; eddy's
// docs/connectors.md holds it for connector.Default.
func (r *Registry) Markdown() string {
	var b strings.Builder
	var connectors, formats []Spec
	for _, s := range r.Specs() {
		if s.Kind == FormatKind {
			formats = append(formats, s)
		} else {
			connectors = append(connectors, s)
		}
	}
	section := func(title, none string, specs []Spec) {
		fmt.Fprintf(&b, "## %s\n\n", title)
		if len(specs) == 0 {
			fmt.Fprintf(&b, "%s\n\n", none)
		}
		for _, s := range specs {
			writeSpec(&b, s)
		}
	}
	section("Connectors", "No connector is registered.", connectors)
	section("Formats", "No format is registered.", formats)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func writeSpec(b *strings.Builder, s Spec) {
	fmt.Fprintf(b, "### %s\n\n", s.Name)
	what := s.Kind.String()
	if s.Kind != FormatKind {
		fmt.Fprintf(b, "`'connector' = '%s'` — %s.", s.Name, what)
	} else {
		fmt.Fprintf(b, "`'format' = '%s'`.", s.Name)
	}
	if s.Description != "" {
		fmt.Fprintf(b, " %s", oneLine(s.Description))
	}
	b.WriteString("\n\n")
	if len(s.Formats) > 0 {
		names := make([]string, len(s.Formats))
		for i, f := range s.Formats {
			names[i] = "`" + f + "`"
		}
		fmt.Fprintf(b, "Formats: %s. The option `format` (required) chooses one; the options of the format are written with its name as a prefix (`%s.<option>`).\n\n",
			strings.Join(names, ", "), s.Formats[0])
	}
	if len(s.Options) == 0 {
		b.WriteString("No options.\n\n")
		return
	}
	b.WriteString("| Option | Type | Default | Required | Secret | Description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, o := range s.Options {
		typ := o.Type.String()
		if o.Type == Enum {
			vals := make([]string, len(o.Values))
			for i, v := range o.Values {
				vals[i] = "`" + v + "`"
			}
			typ += ": " + strings.Join(vals, ", ")
		}
		def := ""
		if o.Default != "" {
			def = "`" + o.Default + "`"
		}
		desc := oneLine(o.Description)
		if len(o.FallbackKeys) > 0 {
			keys := make([]string, len(o.FallbackKeys))
			for i, k := range o.FallbackKeys {
				keys[i] = "`" + k + "`"
			}
			desc += " Also accepted as " + strings.Join(keys, ", ") + "."
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s |\n", o.Key, cell(typ), cell(def), yes(o.Required), yes(o.Secret), cell(desc))
	}
	b.WriteString("\n")
}

func yes(v bool) string {
	if v {
		return "yes"
	}
	return ""
}

// oneLine joins the lines of s.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cell escapes s for a table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

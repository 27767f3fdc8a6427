package plan

import "github.com/eddystream/eddy/sql/parser"

// redactedDef returns the statement that created table t with the values of
// its secret options (passwords, tokens) replaced by "******", for SHOW
// CREATE TABLE.
func (c *Catalog) redactedDef(t *Table) *parser.CreateTable {
	if c.Connectors == nil || len(t.Def.Options) == 0 {
		return t.Def
	}
	given := make(map[string]string, len(t.Def.Options))
	for _, o := range t.Def.Options {
		given[o.Key] = o.Value
	}
	shown := c.Connectors.Redact(given)
	def := *t.Def
	def.Options = make([]*parser.Option, len(t.Def.Options))
	for i, o := range t.Def.Options {
		cp := *o
		cp.Value = shown[o.Key]
		def.Options[i] = &cp
	}
	return &def
}

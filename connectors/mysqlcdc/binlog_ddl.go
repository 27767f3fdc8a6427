package mysqlcdc

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/pipeline"
)

// ddlStatement matches the statements that change tables: the verb, then
// the rest.
var ddlStatement = regexp.MustCompile("(?is)^\\s*(ALTER\\s+(?:ONLINE\\s+|IGNORE\\s+)*TABLE(?:\\s+IF\\s+EXISTS)?|DROP\\s+(?:TEMPORARY\\s+)?TABLE(?:\\s+IF\\s+EXISTS)?|RENAME\\s+TABLE(?:\\s+IF\\s+EXISTS)?|TRUNCATE(?:\\s+TABLE)?|CREATE\\s+OR\\s+REPLACE\\s+TABLE|CREATE\\s+TABLE(?:\\s+IF\\s+NOT\\s+EXISTS)?)\\s+(.*)$")

// columnRenames matches the renames of an ALTER TABLE statement.
var columnRenames = regexp.MustCompile("(?i)(?:RENAME\\s+COLUMN\\s+(`[^`]+`|\\S+)\\s+TO\\s+(`[^`]+`|[^\\s,]+)|CHANGE\\s+(?:COLUMN\\s+)?(?:IF\\s+EXISTS\\s+)?(`[^`]+`|\\S+)\\s+(`[^`]+`|\\S+)\\s)")

// stripComments removes the comments a statement starts with (a tool's,
// or the client's) and joins its lines.
func stripComments(q string) string { return strings.ReplaceAll(trimComments(q), "\n", " ") }

// trimComments removes the comments a statement starts with: /* ... */,
// and the line comments -- and #, which the server logs with the
// statement (a migration tool's, say).
func trimComments(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "/*"):
			_, after, ok := strings.Cut(q[2:], "*/")
			if !ok {
				return q
			}
			q = after
		case strings.HasPrefix(q, "#"), strings.HasPrefix(q, "--") && (len(q) == 2 || q[2] <= ' '):
			// -- starts a comment where a space or a control character
			// follows it.
			_, after, ok := strings.Cut(q, "\n")
			if !ok {
				return ""
			}
			q = after
		default:
			return q
		}
	}
}

func unquote(name string) string { return strings.ReplaceAll(strings.TrimSpace(name), "`", "") }

// ddlTables returns the verb of a statement that changes tables and the
// tables it names (both sides of a RENAME), as db.table in the default
// database schema; ok is false for other statements.
func ddlTables(schema, q string) (verb string, tables [][2]string, ok bool) {
	m := ddlStatement.FindStringSubmatch(stripComments(q))
	if m == nil {
		return "", nil, false
	}
	verb = strings.ToUpper(strings.Fields(m[1])[0])
	if verb == "CREATE" && strings.Contains(strings.ToUpper(m[1]), "REPLACE") {
		verb = "REPLACE"
	}
	name := func(s string) [2]string {
		s, _, _ = strings.Cut(strings.TrimSpace(s), "(")
		s = unquote(strings.Fields(s + " ")[0])
		db, table, ok := strings.Cut(s, ".")
		if !ok {
			return [2]string{schema, s}
		}
		return [2]string{db, table}
	}
	rest := m[2]
	switch verb {
	case "DROP":
		for _, part := range strings.Split(rest, ",") {
			if f := strings.Fields(part); len(f) > 0 {
				tables = append(tables, name(f[0]))
			}
		}
	case "RENAME":
		for _, part := range strings.Split(rest, ",") {
			if f := strings.Fields(part); len(f) >= 3 && strings.EqualFold(f[1], "TO") {
				tables = append(tables, name(f[0]), name(f[2]))
			}
		}
	default:
		if strings.TrimSpace(rest) != "" {
			tables = append(tables, name(rest))
		}
		// ALTER TABLE a RENAME [TO | AS] b moves the table too.
		if f := strings.Fields(rest); verb == "ALTER" && len(f) > 1 {
			after := strings.TrimPrefix(strings.TrimSpace(rest), f[0])
			if m := alterRename.FindStringSubmatch(after); m != nil {
				tables = append(tables, name(m[1]))
			}
		}
	}
	return verb, tables, true
}

// alterRename matches the new name of an ALTER TABLE ... RENAME TO.
var alterRename = regexp.MustCompile("(?i)(?:^|,)\\s*RENAME\\s+(?:TO\\s+|AS\\s+)?((?:`[^`]+`|[^\\s,`]+)(?:\\.(?:`[^`]+`|[^\\s,`]+))?)\\s*(?:,|$)")

// ddl handles a statement of the binary log that may change captured
// tables. A SQL table's columns are fixed when the job starts, so its
// source stops. A pipeline's follows: the statement is applied to the
// tables the source holds (applyDDL) or, where it cannot be, each table it
// names is described again; the change goes down the pipeline as an event.
func (b *binlogReader[T]) ddl(split connector.SplitOutput[T], schema, q string, st queryStatus, at position) error {
	verb, names, ok := ddlTables(schema, q)
	if !ok {
		return nil
	}
	r := b.r
	if r.schemaEvent == nil {
		if verb == "CREATE" {
			return nil
		}
		for _, n := range names {
			if _, captured := r.tables[n[0]+"."+n[1]]; captured {
				return fmt.Errorf("mysql-cdc: table %s.%s changed at binlog %s by %q: a SQL table's columns are fixed when the job starts; declare the new columns and start the job again from a savepoint (a pipeline follows schema changes)",
					n[0], n[1], at, stripComments(q))
			}
		}
		return nil
	}
	conn, err := r.connection()
	if err != nil {
		return err
	}
	ddl := stripComments(q)
	edit := &ddlEdit{}
	if verb != "TRUNCATE" {
		edit = b.applyDDL(conn, schema, q, st)
	}
	renames := edit.renames
	if edit.why != "" {
		renames = statedRenames(q)
		for _, n := range names {
			if r.tables[n[0]+"."+n[1]] != nil {
				r.ctx.Log().Info("mysql-cdc: a statement changes a captured table in a way the source does not follow by itself; the table is described from the server",
					"table", n[0]+"."+n[1], "binlog", at.String(), "statement", ddl, "reason", edit.why)
			}
		}
	}
	seen := map[string]bool{}
	for _, n := range append(names, edit.names...) {
		id := n[0] + "." + n[1]
		if seen[id] {
			continue
		}
		seen[id] = true
		before := r.tables[id]
		if verb == "TRUNCATE" {
			if before != nil {
				b.schemaChange(split, pipeline.Event{Kind: pipeline.TruncateTable, Table: before.tableID(), Schema: before.schema, DDL: ddl})
			}
			continue
		}
		version := 1
		if before != nil {
			version = before.schema.Version + 1
		}
		var now *tableInfo
		if d, applied := edit.tables[id]; applied {
			if d != nil {
				now = d.table()
				if err := r.cfg.finish(now, nil, version); err != nil {
					return fmt.Errorf("%w (after %q at binlog %s)", err, ddl, at)
				}
			}
		} else if r.cfg.captures(n[0], n[1]) {
			t := &tableInfo{db: n[0], name: n[1], chunkKey: -1}
			if err := r.cfg.describeAt(conn, t, version); err != nil {
				return fmt.Errorf("%w (after %q at binlog %s)", err, ddl, at)
			}
			if len(t.cols) > 0 {
				now = t
			}
		}
		switch {
		case before == nil && now == nil:
		case before == nil:
			r.tables[id] = now
			b.schemaChange(split, pipeline.Event{Kind: pipeline.CreateTable, Table: now.tableID(), Schema: now.schema, DDL: ddl})
			if verb == "RENAME" || verb == "ALTER" {
				r.ctx.Log().Warn("mysql-cdc: a table was renamed into the captured tables; its rows from before are not read, only its changes from now on",
					"table", id, "binlog", at.String())
			}
		case now == nil:
			delete(r.tables, id)
			b.schemaChange(split, pipeline.Event{Kind: pipeline.DropTable, Table: before.tableID(), Schema: before.schema, DDL: ddl})
		default:
			if verb == "REPLACE" {
				b.schemaChange(split, pipeline.Event{Kind: pipeline.TruncateTable, Table: before.tableID(), Schema: before.schema, DDL: ddl})
			}
			if now.schema.Same(before.schema) {
				// The pipeline's schema stays; what else changed (a
				// column's character set, say) is read from now on.
				now.schema, now.rt, now.w = before.schema, before.rt, before.w
				r.tables[id] = now
				continue
			}
			r.tables[id] = now
			changes := pipeline.Diff(before.schema, now.schema, renames)
			b.schemaChange(split, pipeline.Event{Kind: pipeline.AlterTable, Table: now.tableID(), Schema: now.schema, Changes: changes, DDL: ddl})
		}
	}
	return nil
}

// statedRenames returns the renames of columns an ALTER TABLE statement
// states, old name to new, as its text reads.
func statedRenames(q string) map[string]string {
	renames := map[string]string{}
	for _, m := range columnRenames.FindAllStringSubmatch(q, -1) {
		from, to := m[1], m[2]
		if from == "" {
			from, to = m[3], m[4]
		}
		if from, to = unquote(from), unquote(to); from != to {
			renames[from] = to
		}
	}
	return renames
}

// describeAt describes a table of a pipeline, giving its schema the
// version; a table that does not exist has no columns.
func (c *config) describeAt(conn *client.Conn, t *tableInfo, version int) error {
	if err := c.describe(conn, t, nil); err != nil {
		return err
	}
	if t.schema != nil {
		t.schema.Version = version
	}
	return nil
}

// schemaChange emits a schema event of a pipeline, if the source is to.
func (b *binlogReader[T]) schemaChange(split connector.SplitOutput[T], e pipeline.Event) {
	if b.r.cfg.schemaChanges {
		split.Emit(b.r.schemaEvent(e))
	}
}

// announce emits, in a pipeline, the schema of every captured table when
// the binary log starts to be read, so that the sink creates the tables
// that have no rows yet.
func (b *binlogReader[T]) announce(split connector.SplitOutput[T]) {
	if b.r.schemaEvent == nil {
		return
	}
	for _, t := range sortedTables(b.r.tables) {
		split.Emit(b.r.schemaEvent(pipeline.Event{Kind: pipeline.CreateTable, Table: t.tableID(), Schema: t.schema}))
	}
}

package plan

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/sql/types"
)

// notNullEnforcerKey is the setting that says what a sink does with a row
// holding NULL in a column the sink table declares NOT NULL, as Flink's
// option of that name: ERROR (the default) fails the job, DROP drops the
// row.
const notNullEnforcerKey = "table.exec.sink.not-null-enforcer"

// notNullEnforcer is the check of a sink's NOT NULL columns that the
// query may fill with NULL.
type notNullEnforcer struct {
	// cols are those columns; drop says to drop the rows that hold NULL
	// in one of them rather than fail.
	cols []int
	drop bool
	// deletesByKey says the query's deletions may carry their key alone
	// (an upsert stream's): they are passed unchecked, since the sink
	// applies them by key.
	deletesByKey bool
}

// newNotNullEnforcer returns the check of the columns of target that are
// NOT NULL while the query's, of rt and changes of mode, may be NULL,
// under the setting of settings; nil if there are none.
func newNotNullEnforcer(settings map[string]string, rt, target *types.RowType, mode changelog.Mode) (*notNullEnforcer, error) {
	e := &notNullEnforcer{deletesByKey: isUpsertMode(mode)}
	switch v, ok := settings[notNullEnforcerKey]; {
	case !ok || strings.EqualFold(strings.TrimSpace(v), "ERROR"):
	case strings.EqualFold(strings.TrimSpace(v), "DROP"):
		e.drop = true
	default:
		return nil, fmt.Errorf("SET '%s' = '%s': the value is ERROR (fail the job on a NULL in a NOT NULL column of a sink, the default) or DROP (drop such rows)", notNullEnforcerKey, v)
	}
	for i, f := range target.Fields() {
		if !f.Type.IsNullable() && rt.FieldType(i).IsNullable() {
			e.cols = append(e.cols, i)
		}
	}
	if len(e.cols) == 0 {
		return nil, nil
	}
	return e, nil
}

// apply checks the rows of in, bound for the sink of table, whose rows
// are of type rt, and returns the rows that pass; it runs with in's
// parallelism, chained to it.
func (e *notNullEnforcer) apply(in *eddy.Stream[Rec], table string, rt *types.RowType) *eddy.Stream[Rec] {
	out := eddy.Process(in, func() eddy.ProcessFunction[Rec, Rec] {
		return &notNullCheck{e: e, table: table, rt: rt}
	})
	names := make([]string, len(e.cols))
	for k, i := range e.cols {
		names[k] = rt.Field(i).Name
	}
	// Flink's name of the operator, which plans and metrics show.
	return out.Parallelism(in.Subtasks()).Name(fmt.Sprintf("ConstraintEnforcer[NotNullEnforcer(fields=[%s])]", strings.Join(names, ", ")))
}

// notNullCheck is a subtask's check of the rows of a sink.
type notNullCheck struct {
	e       *notNullEnforcer
	table   string
	rt      *types.RowType
	dropped int64
}

func (c *notNullCheck) ProcessElement(ctx *eddy.ProcessContext[Rec], r Rec) error {
	if r.Kind == changelog.Delete && c.e.deletesByKey {
		ctx.Emit(r)
		return nil
	}
	for _, i := range c.e.cols {
		if !r.Row.IsNull(i) {
			continue
		}
		col := c.rt.Field(i).Name
		if !c.e.drop {
			return fmt.Errorf("table sink %s: column %s is NOT NULL, but the query writes NULL into it, in the row %s; filter such rows out (WHERE %s IS NOT NULL), give the column a value (COALESCE), or SET '%s' = 'DROP' to drop them",
				c.table, col, types.FormatChange(r.Kind, c.rt, r.Row), col, notNullEnforcerKey)
		}
		if c.dropped == 0 {
			slog.Warn("dropping the rows with NULL in a NOT NULL column of a sink, as '"+notNullEnforcerKey+"' = 'DROP' says",
				"table", c.table, "column", col, "row", types.FormatChange(r.Kind, c.rt, r.Row))
		}
		c.dropped++
		return nil
	}
	ctx.Emit(r)
	return nil
}

// Close reports the rows the subtask dropped.
func (c *notNullCheck) Close() error {
	if c.dropped > 0 {
		slog.Warn("dropped rows with NULL in a NOT NULL column of a sink, as '"+notNullEnforcerKey+"' = 'DROP' says",
			"table", c.table, "rows", c.dropped)
	}
	return nil
}

package mysqlcdc

import (
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/internal/cdc"
	"github.com/eddystream/eddy/pipeline"
	"github.com/eddystream/eddy/sql/types"
)

// pipelineSpec is the 'source' block of a pipeline of type mysql: the
// options of the mysql-cdc connector, with 'tables' in place of
// 'database-name' and 'table-name', as Flink CDC's pipeline connector has
// them.
var pipelineSpec = cdc.PipelineSpec(spec, "mysql",
	"Reads every table of a MySQL or MariaDB server that 'tables' matches, for a pipeline: a lock-free, parallel "+
		"snapshot of their rows, then their changes and schema changes from the binary log, exactly once through checkpoints.",
	"The tables to capture: comma-separated 'database.table' patterns whose parts are regular expressions matched whole; '\\.' is a regular expression's '.' (app_db.\\.* is every table of app_db).",
	"ALTER, CREATE, TRUNCATE and DROP TABLE",
	[]string{"database-name", "table-name"},
	connector.Option{Key: "treat-tinyint1-as-boolean.enabled", Type: connector.Bool, Default: "true",
		Description: "Whether TINYINT(1) columns are BOOLEAN (otherwise TINYINT)."},
)

// PipelineSource is a mysql source of pipeline events.
type PipelineSource struct{ cfg *config }

// NewPipelineSource returns a source of the pipeline events of the tables
// the validated options of a 'type: mysql' source block select.
func NewPipelineSource(o connector.Options) (*PipelineSource, error) {
	cfg, err := newConfigFor(o, true)
	if err != nil {
		return nil, err
	}
	return &PipelineSource{cfg: cfg}, nil
}

// NewEnumerator returns the source's enumerator.
func (s *PipelineSource) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	return newEnumerator(ctx, s.cfg, nil, restored)
}

// NewReader returns the reader of one subtask.
func (s *PipelineSource) NewReader(ctx connector.ReaderContext) (connector.Reader[pipeline.Event], error) {
	r := newReader(ctx, s.cfg, nil, func(t *tableInfo, kind changelog.Kind, row types.Row) pipeline.Event {
		return cdc.DataChange(t.tableID(), t.schema, kind, row)
	})
	r.schemaEvent = func(e pipeline.Event) pipeline.Event { return e }
	if _, err := r.serverID(); err != nil {
		return nil, err
	}
	return r, nil
}

// tableID is the table's id in a pipeline: its database as the schema.
func (t *tableInfo) tableID() pipeline.TableID {
	return pipeline.TableID{Schema: t.db, Table: t.name}
}

// pipelineTable gives a described table its row type and schema in a
// pipeline, from the server's column types.
func (c *config) pipelineTable(t *tableInfo, version int) error {
	fields := make([]types.Field, len(t.cols))
	for i := range t.cols {
		ty, err := c.typeOf(&t.cols[i])
		if err != nil {
			return fmt.Errorf("mysql-cdc: column %s of table %s: %w", t.cols[i].name, t.id(), err)
		}
		fields[i] = types.F(t.cols[i].name, ty)
		t.toRow[i] = i
	}
	schema, err := cdc.PipelineSchema(fields, t.pk, version)
	if err != nil {
		return fmt.Errorf("mysql-cdc: table %s: %w", t.id(), err)
	}
	t.schema, t.rt, t.w = schema, schema.Columns, types.NewRowWriter(schema.Columns, types.NewArena(64<<10))
	return nil
}

// typeOf returns the SQL type of a column in a pipeline, as Flink CDC maps
// MySQL's types.
func (c *config) typeOf(col *column) (types.Type, error) {
	ps := cdc.TypeParams(col.columnType)
	param := func(i, def int) int {
		if i < len(ps) {
			return ps[i]
		}
		return def
	}
	var t types.Type
	switch col.dataType {
	case "tinyint":
		switch {
		case param(0, 0) == 1 && c.tinyInt1Bool && !col.unsigned:
			t = types.Boolean()
		case col.unsigned:
			t = types.SmallInt()
		default:
			t = types.TinyInt()
		}
	case "smallint":
		t = types.SmallInt()
		if col.unsigned {
			t = types.Int()
		}
	case "mediumint":
		t = types.Int()
	case "int", "integer":
		t = types.Int()
		if col.unsigned {
			t = types.BigInt()
		}
	case "bigint":
		t = types.BigInt()
		if col.unsigned {
			t = types.DecimalType(20, 0)
		}
	case "year":
		t = types.Int()
	case "bit":
		if n := param(0, 1); n == 1 {
			t = types.Boolean()
		} else {
			t = types.Binary((n + 7) / 8)
		}
	case "decimal", "numeric":
		p, s := param(0, 10), param(1, 0)
		if p > 38 {
			t = types.String()
		} else {
			t = types.DecimalType(p, s)
		}
	case "float":
		t = types.Float()
	case "double", "real":
		t = types.Double()
	case "char":
		t = types.Char(max(param(0, 1), 1))
	case "varchar":
		t = types.VarChar(max(param(0, 1), 1))
	case "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json":
		t = types.String()
	case "binary":
		t = types.Binary(max(param(0, 1), 1))
	case "varbinary":
		t = types.VarBinary(max(param(0, 1), 1))
	case "tinyblob", "blob", "mediumblob", "longblob":
		t = types.Bytes()
	case "date":
		t = types.DateType()
	case "time":
		t = types.TimeType(param(0, 0))
	case "datetime":
		t = types.TimestampType(param(0, 0))
	case "timestamp":
		t = types.TimestampLTZType(param(0, 0))
	default:
		return types.Type{}, fmt.Errorf("columns of type %s are not read by the source; exclude the table with 'tables.exclude', or leave the column out with a transform's projection after changing its type", col.columnType)
	}
	if col.notNull {
		t = t.NotNull()
	}
	return t, nil
}

type pipelineFactory struct{}

func (pipelineFactory) Spec() connector.Spec { return pipelineSpec }

func (pipelineFactory) NewSource(ctx connector.Context) (any, error) {
	return NewPipelineSource(ctx.Options)
}

func init() { pipeline.Sources.Register(pipelineFactory{}) }

// sortedTables returns the tables sorted by id.
func sortedTables(m map[string]*tableInfo) []*tableInfo { return cdc.SortedValues(m) }

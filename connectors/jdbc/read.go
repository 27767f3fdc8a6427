package jdbc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// dbColumn is a column of the database's table, as its catalog describes
// it.
type dbColumn struct {
	name string
	// dataType is information_schema's DATA_TYPE ('integer', 'numeric',
	// 'timestamp without time zone'; 'int', 'decimal', 'datetime').
	dataType string
	// full is the type as the database writes it, for messages
	// ('numeric(12,2)', 'int(10) unsigned').
	full     string
	unsigned bool
}

// readConn is a connection that reads a table.
type readConn interface {
	// columns returns the columns of table by name; an error if the
	// database has no such table.
	columns(ctx context.Context) (map[string]dbColumn, error)
	// query runs q with args and calls each with every row, decoded by
	// dec; with fetch > 0 it fetches that many rows per round trip, where
	// the dialect can. A row is valid until each returns unless dec writes
	// into an arena that is not scratch.
	query(ctx context.Context, q string, args []any, fetch int, dec *decoder, each func(types.Row) error) error
	close()
}

// dialect is what the scan and lookup sources need of a database.
type dialect struct {
	mysql bool
}

func (d dialect) quoteTable(name string) string {
	if d.mysql {
		return quoteMySQL(name)
	}
	return quotePG(name)
}

func (d dialect) quote(col string) string {
	if d.mysql {
		return quoteMySQLIdent(col)
	}
	return quotePGIdent(col)
}

// param returns the placeholder of parameter n (from 1).
func (d dialect) param(n int) string {
	if d.mysql {
		return "?"
	}
	return "$" + strconv.Itoa(n)
}

// connect opens a reading connection.
func connectRead(ctx context.Context, c *config) (readConn, error) {
	if c.url.dialect == "mysql" {
		m := &mysql{c: c}
		if err := m.connect(ctx); err != nil {
			return nil, err
		}
		return &myReader{c: c, m: m}, nil
	}
	p := &postgres{c: c}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	return &pgReader{c: c, p: p}, nil
}

// decoder writes the columns a query selects into rows of rt.
type decoder struct {
	rt *types.RowType
	w  *types.RowWriter
	// pg and my are the field decoders of the dialect, one per column.
	pg      []pgField
	formats []int16
	my      []myField
}

// newDecoder returns the decoder of the table's columns cols (indexes in
// t.Schema) read from the database's columns dbCols, or an error naming
// the first column whose database type cannot be read as declared.
func newDecoder(c *config, t *connector.Table, cols []int, dbCols map[string]dbColumn, arena *types.Arena) (*decoder, error) {
	fs := make([]types.Field, len(cols))
	for j, i := range cols {
		fs[j] = t.Schema.Field(i)
	}
	rt := types.MustRowType(fs...)
	d := &decoder{rt: rt, w: types.NewRowWriter(rt, arena)}
	mysql := c.url.dialect == "mysql"
	for _, f := range fs {
		col, ok := dbCols[f.Name]
		if !ok {
			return nil, fmt.Errorf("jdbc: %s has no column %q, which the table declares; its columns are %s; declare the columns the database table has", c.where(), f.Name, columnNames(dbCols))
		}
		var ok2 bool
		if mysql {
			var fd myField
			fd, ok2 = myFieldOf(col, f.Type)
			d.my = append(d.my, fd)
		} else {
			var fd pgField
			fd, ok2 = pgFieldOf(col, f.Type)
			d.pg = append(d.pg, fd)
			d.formats = append(d.formats, fd.format)
		}
		if !ok2 {
			return nil, fmt.Errorf("jdbc: column %q of %s is %s in the database, which cannot be read as the declared %s; declare it as %s",
				f.Name, c.where(), col.full, f.Type, suggestType(col, mysql))
		}
	}
	return d, nil
}

func columnNames(cols map[string]dbColumn) string {
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// fieldErr wraps the error of decoding field i with the column's name.
func (d *decoder) fieldErr(i int, err error) error {
	return &fieldError{column: d.rt.Field(i).Name, err: err}
}

// fieldError is a value of the database that does not read as its
// column's declared type: reading it again gives the same error.
type fieldError struct {
	column string
	err    error
}

func (e *fieldError) Error() string { return fmt.Sprintf("column %q: %v", e.column, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// setInt sets field i (of type t) from an integer of the database,
// refusing one out of the field's range.
func setInt(w *types.RowWriter, i int, t types.Type, n int64) error {
	switch t.Kind() {
	case types.KindBoolean:
		w.SetBool(i, n != 0)
		return nil
	case types.KindDecimal:
		return w.SetDecimal(i, types.DecimalFromInt64(n))
	case types.KindFloat:
		w.SetFloat32(i, float32(n))
		return nil
	case types.KindDouble:
		w.SetFloat64(i, float64(n))
		return nil
	}
	return w.SetValue(i, n)
}

// setDecimalText sets DECIMAL field i from its exact text.
func setDecimalText(w *types.RowWriter, i int, s string) error {
	d, err := types.ParseDecimal(s)
	if err != nil {
		return err
	}
	return w.SetDecimal(i, d)
}

// setFloat32 sets field i (FLOAT or DOUBLE) from a float32 of the
// database: a DOUBLE gets the shortest decimal that reads back as it (1.1,
// not 1.100000023841858), as the database writes its text.
func setFloat32(w *types.RowWriter, i int, t types.Type, f float32) {
	if t.Kind() == types.KindFloat {
		w.SetFloat32(i, f)
		return
	}
	d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	w.SetFloat64(i, d)
}

// suggestType names the SQL type a database column reads as.
func suggestType(col dbColumn, mysql bool) string {
	switch strings.ToLower(col.dataType) {
	case "boolean", "bool", "bit":
		return "BOOLEAN"
	case "tinyint":
		if strings.HasPrefix(strings.ToLower(col.full), "tinyint(1)") {
			return "BOOLEAN or TINYINT"
		}
		if col.unsigned {
			return "SMALLINT"
		}
		return "TINYINT"
	case "smallint", "int2":
		if col.unsigned {
			return "INT"
		}
		return "SMALLINT"
	case "mediumint", "int4", "year":
		return "INT"
	case "int":
		if col.unsigned {
			return "BIGINT"
		}
		return "INT"
	case "bigint", "int8":
		if col.unsigned {
			return "DECIMAL(20, 0)"
		}
		return "BIGINT"
	case "real", "float", "float4":
		return "FLOAT"
	case "double", "float8":
		return "DOUBLE"
	case "numeric", "decimal":
		return "DECIMAL with the column's precision and scale"
	case "date":
		return "DATE"
	case "time":
		return "TIME"
	case "datetime":
		return "TIMESTAMP"
	case "timestamp":
		if mysql {
			return "TIMESTAMP or TIMESTAMP_LTZ"
		}
		return "TIMESTAMP"
	case "timestamptz":
		return "TIMESTAMP_LTZ"
	case "bytea", "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return "BYTES"
	}
	return "STRING"
}

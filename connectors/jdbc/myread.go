package jdbc

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/eddystream/eddy/sql/types"
)

// myReader reads through a go-mysql connection: queries with parameters
// as prepared statements (one per text, kept for the connection's life),
// rows streamed as the server sends them.
type myReader struct {
	c *config
	m *mysql
}

func (r *myReader) close() { r.m.close() }

func (r *myReader) columns(ctx context.Context) (map[string]dbColumn, error) {
	db, table, ok := strings.Cut(r.c.table, ".")
	if !ok {
		db, table = r.c.url.database, r.c.table
	}
	s, err := r.m.stmt("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?")
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the columns of %s: %w", r.c.where(), err)
	}
	res, err := s.Execute(db, table)
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the columns of %s: %w", r.c.where(), err)
	}
	defer res.Close()
	out := map[string]dbColumn{}
	for i := range res.Values {
		name, _ := res.GetString(i, 0)
		dt, _ := res.GetString(i, 1)
		full, _ := res.GetString(i, 2)
		out[name] = dbColumn{name: name, dataType: strings.ToLower(dt), full: full, unsigned: strings.Contains(strings.ToLower(full), "unsigned")}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("jdbc: %s does not exist (or the user %q cannot see it); check 'table-name'", r.c.where(), r.c.user)
	}
	return out, nil
}

func (r *myReader) query(ctx context.Context, q string, args []any, _ int, dec *decoder, each func(types.Row) error) error {
	w := dec.w
	var rowErr error
	perRow := func(row []gomysql.FieldValue) error {
		w.Reset()
		for i := range row {
			fv := &row[i]
			if fv.Type == gomysql.FieldValueTypeNull {
				continue
			}
			if err := dec.my[i](w, i, dec.rt.Field(i).Type, fv); err != nil {
				rowErr = dec.fieldErr(i, err)
				return rowErr
			}
		}
		if err := each(w.Finish()); err != nil {
			rowErr = err
			return err
		}
		return ctx.Err()
	}
	var res gomysql.Result
	var err error
	if len(args) == 0 {
		err = r.m.conn.ExecuteSelectStreaming(q, &res, perRow, nil)
	} else {
		var s *client.Stmt
		if s, err = r.m.stmt(q); err == nil {
			err = s.ExecuteSelectStreaming(&res, perRow, nil, args...)
		}
	}
	if rowErr != nil {
		// The rest of the result is still on the connection.
		r.m.close()
		return rowErr
	}
	return err
}

// myField decodes a column of MySQL, as the text or the binary protocol
// gives it.
type myField func(w *types.RowWriter, i int, t types.Type, fv *gomysql.FieldValue) error

// myInt sets an integer column.
func myInt(w *types.RowWriter, i int, t types.Type, fv *gomysql.FieldValue) error {
	switch fv.Type {
	case gomysql.FieldValueTypeSigned:
		return setInt(w, i, t, fv.AsInt64())
	case gomysql.FieldValueTypeUnsigned:
		u := fv.AsUint64()
		if u > math.MaxInt64 {
			if t.Kind() != types.KindDecimal {
				return fmt.Errorf("%d is out of the range of %s", u, t)
			}
			return setDecimalText(w, i, fmt.Sprint(u))
		}
		return setInt(w, i, t, int64(u))
	case gomysql.FieldValueTypeString:
		b := fv.AsString()
		if t.Kind() == types.KindBoolean && len(b) == 1 { // BIT(1)
			w.SetBool(i, b[0] != 0)
			return nil
		}
		var n int64
		for _, c := range b { // BIT(n) as big-endian bytes
			n = n<<8 | int64(c)
		}
		return setInt(w, i, t, n)
	}
	return fmt.Errorf("an integer came as %v", fv.Value())
}

func myText(w *types.RowWriter, i int, _ types.Type, fv *gomysql.FieldValue) error {
	w.SetString(i, string(fv.AsString()))
	return nil
}

// myTemporal sets a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ column from its
// text; MySQL's zero dates read as NULL. Sessions use UTC, so the text of
// a TIMESTAMP column is the UTC wall clock of its instant.
func myTemporal(w *types.RowWriter, i int, t types.Type, fv *gomysql.FieldValue) error {
	s := string(fv.AsString())
	if strings.HasPrefix(s, "0000-00-00") {
		return nil
	}
	return w.ParseText(i, s, nil)
}

// myFieldOf returns the decoder of a MySQL column read as t, or false if
// the column's type does not read as t.
func myFieldOf(col dbColumn, t types.Type) (myField, bool) {
	dt := col.dataType
	intWidth := map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64, "year": 16}[dt]
	if intWidth > 0 && col.unsigned {
		intWidth++
	}
	fits := func(bits int) bool { return intWidth > 0 && intWidth <= bits }
	switch t.Kind() {
	case types.KindBoolean:
		if dt == "tinyint" || dt == "bit" {
			return myInt, true
		}
	case types.KindTinyInt:
		return myInt, fits(8)
	case types.KindSmallInt:
		return myInt, fits(16)
	case types.KindInt:
		return myInt, fits(32)
	case types.KindBigInt:
		return myInt, fits(64)
	case types.KindDecimal:
		if intWidth > 0 {
			return myInt, true
		}
		if dt == "decimal" {
			return func(w *types.RowWriter, i int, _ types.Type, fv *gomysql.FieldValue) error {
				return setDecimalText(w, i, string(fv.AsString()))
			}, true
		}
	case types.KindFloat, types.KindDouble:
		if dt == "float" || (dt == "double" && t.Kind() == types.KindDouble) {
			return func(w *types.RowWriter, i int, t types.Type, fv *gomysql.FieldValue) error {
				f := fv.AsFloat64()
				if fv.Type == gomysql.FieldValueTypeString {
					return w.ParseText(i, string(fv.AsString()), nil)
				}
				if dt == "float" {
					// The text protocol's FLOAT is the double of a float32.
					setFloat32(w, i, t, float32(f))
					return nil
				}
				w.SetFloat64(i, f)
				return nil
			}, true
		}
	case types.KindChar, types.KindVarChar:
		switch dt {
		case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json", "enum", "set":
			return myText, true
		}
	case types.KindBinary, types.KindVarBinary:
		switch dt {
		case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
			return func(w *types.RowWriter, i int, _ types.Type, fv *gomysql.FieldValue) error {
				w.SetBytes(i, fv.AsString())
				return nil
			}, true
		}
	case types.KindDate:
		return myTemporal, dt == "date"
	case types.KindTime:
		return myTemporal, dt == "time"
	case types.KindTimestamp:
		return myTemporal, dt == "datetime" || dt == "timestamp"
	case types.KindTimestampLTZ:
		return myTemporal, dt == "timestamp"
	}
	return nil, false
}

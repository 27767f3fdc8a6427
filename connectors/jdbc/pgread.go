package jdbc

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/eddystream/eddy/sql/types"
)

// pgReader reads through a pgx connection.
type pgReader struct {
	c *config
	p *postgres
}

func (r *pgReader) close() { r.p.close() }

func (r *pgReader) columns(ctx context.Context) (map[string]dbColumn, error) {
	schema, table, ok := strings.Cut(r.c.table, ".")
	if !ok {
		schema, table = "", r.c.table
	}
	rows, err := r.p.conn.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod),
		CASE WHEN t.typtype = 'e' THEN 'USER-DEFINED' ELSE coalesce(bt.typname, t.typname) END
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, quotePG(schemaTable(schema, table)))
	if err != nil {
		return nil, fmt.Errorf("jdbc: reading the columns of %s: %w", r.c.where(), err)
	}
	defer rows.Close()
	out := map[string]dbColumn{}
	for rows.Next() {
		var c dbColumn
		if err := rows.Scan(&c.name, &c.full, &c.dataType); err != nil {
			return nil, fmt.Errorf("jdbc: reading the columns of %s: %w", r.c.where(), err)
		}
		out[c.name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("jdbc: reading the columns of %s: %w", r.c.where(), err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("jdbc: %s does not exist (or the user %q cannot see it); check 'table-name' (a name, or 'schema.name')", r.c.where(), r.c.user)
	}
	return out, nil
}

func schemaTable(schema, table string) string {
	if schema == "" {
		return table
	}
	return schema + "." + table
}

// query runs q; with fetch > 0 through a cursor, fetch rows per round
// trip, in a read-only transaction.
func (r *pgReader) query(ctx context.Context, q string, args []any, fetch int, dec *decoder, each func(types.Row) error) error {
	conn := r.p.conn
	formats := pgx.QueryResultFormats(dec.formats)
	if fetch <= 0 {
		rows, err := conn.Query(ctx, q, append([]any{formats}, args...)...)
		if err != nil {
			return err
		}
		_, err = r.rows(rows, dec, each)
		return err
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "DECLARE eddy_scan NO SCROLL CURSOR FOR "+q, args...); err != nil {
		return err
	}
	fetchQ := fmt.Sprintf("FETCH FORWARD %d FROM eddy_scan", fetch)
	for {
		rows, err := tx.Query(ctx, fetchQ, pgx.QueryExecModeDescribeExec, formats)
		if err != nil {
			return err
		}
		n, err := r.rows(rows, dec, each)
		if err != nil {
			return err
		}
		if n < fetch {
			return tx.Commit(ctx)
		}
	}
}

// rows decodes the rows of a result and returns how many there were.
func (r *pgReader) rows(rows pgx.Rows, dec *decoder, each func(types.Row) error) (int, error) {
	defer rows.Close()
	n := 0
	w := dec.w
	for rows.Next() {
		n++
		w.Reset()
		for i, b := range rows.RawValues() {
			if b == nil {
				continue // NULL
			}
			if err := dec.pg[i].set(w, i, dec.rt.Field(i).Type, b); err != nil {
				return n, dec.fieldErr(i, err)
			}
		}
		if err := each(w.Finish()); err != nil {
			return n, err
		}
	}
	return n, rows.Err()
}

// pgField decodes a column of PostgreSQL in its wire format.
type pgField struct {
	format int16
	set    func(w *types.RowWriter, i int, t types.Type, b []byte) error
}

// pgEpochDays is 2000-01-01, PostgreSQL's epoch, in days since 1970.
const pgEpochDays = 10957

// pgEpochMicros is PostgreSQL's epoch in microseconds since 1970.
const pgEpochMicros = pgEpochDays * 86400 * 1000000

func pgInt(w *types.RowWriter, i int, t types.Type, b []byte) error {
	var n int64
	switch len(b) {
	case 2:
		n = int64(int16(binary.BigEndian.Uint16(b)))
	case 4:
		n = int64(int32(binary.BigEndian.Uint32(b)))
	case 8:
		n = int64(binary.BigEndian.Uint64(b))
	default:
		return fmt.Errorf("an integer of %d bytes", len(b))
	}
	return setInt(w, i, t, n)
}

func pgText(w *types.RowWriter, i int, _ types.Type, b []byte) error {
	w.SetString(i, string(b))
	return nil
}

// pgMicros sets a TIMESTAMP or TIMESTAMP_LTZ from microseconds since
// PostgreSQL's epoch.
func pgMicros(w *types.RowWriter, i int, _ types.Type, b []byte) error {
	us := int64(binary.BigEndian.Uint64(b))
	if us == math.MaxInt64 || us == math.MinInt64 {
		return fmt.Errorf("an infinite timestamp, which has no SQL value")
	}
	us += pgEpochMicros
	ms := floorDiv(us, 1000)
	w.SetTimestamp(i, types.Timestamp{Millis: ms, NanoOfMilli: int32(us-ms*1000) * 1000})
	return nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// pgFieldOf returns the decoder of a PostgreSQL column read as t, or false
// if the column's type does not read as t.
func pgFieldOf(col dbColumn, t types.Type) (pgField, bool) {
	const bin, text = 1, 0
	dt := col.dataType
	isInt := dt == "int2" || dt == "int4" || dt == "int8"
	switch t.Kind() {
	case types.KindBoolean:
		if dt == "bool" {
			return pgField{bin, func(w *types.RowWriter, i int, _ types.Type, b []byte) error { w.SetBool(i, b[0] != 0); return nil }}, true
		}
	case types.KindTinyInt:
		if dt == "int2" {
			return pgField{bin, pgInt}, true
		}
	case types.KindSmallInt:
		if dt == "int2" {
			return pgField{bin, pgInt}, true
		}
	case types.KindInt:
		if dt == "int2" || dt == "int4" {
			return pgField{bin, pgInt}, true
		}
	case types.KindBigInt:
		if isInt {
			return pgField{bin, pgInt}, true
		}
	case types.KindFloat, types.KindDouble:
		if dt == "float4" {
			return pgField{bin, func(w *types.RowWriter, i int, t types.Type, b []byte) error {
				setFloat32(w, i, t, math.Float32frombits(binary.BigEndian.Uint32(b)))
				return nil
			}}, true
		}
		if dt == "float8" && t.Kind() == types.KindDouble {
			return pgField{bin, func(w *types.RowWriter, i int, _ types.Type, b []byte) error {
				w.SetFloat64(i, math.Float64frombits(binary.BigEndian.Uint64(b)))
				return nil
			}}, true
		}
	case types.KindDecimal:
		if isInt {
			return pgField{bin, pgInt}, true
		}
		if dt == "numeric" {
			return pgField{text, func(w *types.RowWriter, i int, _ types.Type, b []byte) error { return setDecimalText(w, i, string(b)) }}, true
		}
	case types.KindChar, types.KindVarChar:
		switch dt {
		case "text", "varchar", "bpchar", "name", "json", "jsonb", "uuid", "xml", "citext", "USER-DEFINED":
			return pgField{text, pgText}, true
		}
	case types.KindBinary, types.KindVarBinary:
		if dt == "bytea" {
			return pgField{bin, func(w *types.RowWriter, i int, _ types.Type, b []byte) error { w.SetBytes(i, b); return nil }}, true
		}
	case types.KindDate:
		if dt == "date" {
			return pgField{bin, func(w *types.RowWriter, i int, _ types.Type, b []byte) error {
				d := int32(binary.BigEndian.Uint32(b))
				if d == math.MaxInt32 || d == math.MinInt32 {
					return fmt.Errorf("an infinite date, which has no SQL value")
				}
				w.SetDate(i, types.Date(int64(d)+pgEpochDays))
				return nil
			}}, true
		}
	case types.KindTime:
		if dt == "time" {
			return pgField{bin, func(w *types.RowWriter, i int, _ types.Type, b []byte) error {
				w.SetTime(i, types.Time(int64(binary.BigEndian.Uint64(b))*1000))
				return nil
			}}, true
		}
	case types.KindTimestamp:
		if dt == "timestamp" {
			return pgField{bin, pgMicros}, true
		}
	case types.KindTimestampLTZ:
		if dt == "timestamptz" {
			return pgField{bin, pgMicros}, true
		}
	}
	return pgField{}, false
}

package formats

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// CSVRowOptions configure the CSV of SQL rows, as Flink's csv format's
// options do.
type CSVRowOptions struct {
	// FieldDelimiter separates fields; 0 means ','.
	FieldDelimiter byte
	// Quote encloses fields that hold the delimiter, a quote or a line
	// break (a quote inside is doubled); 0 with DisableQuote means none.
	Quote byte
	// DisableQuote turns quoting off: fields are never enclosed.
	DisableQuote bool
	// Escape, if not 0, makes the character after it literal.
	Escape byte
	// NullLiteral, if set, is the text of NULL (read and written);
	// otherwise NULL is written as an empty field, and an empty unquoted
	// field reads as NULL (an empty quoted field is an empty string).
	NullLiteral    string
	HasNullLiteral bool
	// AllowComments skips lines that start with '#'.
	AllowComments bool
	// IgnoreParseErrors makes a field that does not parse NULL, and a
	// line with the wrong number of fields skipped, instead of failing.
	IgnoreParseErrors bool
}

func (o *CSVRowOptions) delim() byte {
	if o.FieldDelimiter == 0 {
		return ','
	}
	return o.FieldDelimiter
}

func (o *CSVRowOptions) quote() byte {
	if o.DisableQuote {
		return 0
	}
	if o.Quote == 0 {
		return '"'
	}
	return o.Quote
}

// checkCSVColumns refuses the columns CSV cannot hold.
func checkCSVColumns(rt *types.RowType) error {
	for _, f := range rt.Fields() {
		if f.Type.IsConstructed() {
			return fmt.Errorf("csv: column %s is %s, which the csv format cannot hold; use scalar columns, or the json format", types.QuoteIdentifier(f.Name), f.Type)
		}
	}
	return nil
}

// splitCSV splits one line into fields, telling which were quoted.
func splitCSV(line []byte, o *CSVRowOptions, fields []string, quoted []bool) ([]string, []bool, error) {
	fields, quoted = fields[:0], quoted[:0]
	d, q, e := o.delim(), o.quote(), o.Escape
	var cur []byte
	i := 0
	for {
		cur = cur[:0]
		isQuoted := false
		if q != 0 && i < len(line) && line[i] == q {
			isQuoted = true
			i++
			closed := false
			for i < len(line) {
				c := line[i]
				switch {
				case e != 0 && c == e && i+1 < len(line):
					cur = append(cur, line[i+1])
					i += 2
					continue
				case c == q && i+1 < len(line) && line[i+1] == q:
					cur = append(cur, q)
					i += 2
					continue
				case c == q:
					closed = true
					i++
				default:
					cur = append(cur, c)
					i++
					continue
				}
				break
			}
			if !closed {
				return nil, nil, fmt.Errorf("csv: field %d has no closing quote %q (a quoted field may not span lines)", len(fields)+1, q)
			}
			if i < len(line) && line[i] != d {
				return nil, nil, fmt.Errorf("csv: field %d has %q after its closing quote; expected the delimiter %q", len(fields)+1, line[i], d)
			}
		} else {
			for i < len(line) && line[i] != d {
				if e != 0 && line[i] == e && i+1 < len(line) {
					i++
				}
				cur = append(cur, line[i])
				i++
			}
		}
		fields = append(fields, string(cur))
		quoted = append(quoted, isQuoted)
		if i >= len(line) {
			return fields, quoted, nil
		}
		i++ // the delimiter
	}
}

// appendCSVField appends s as one field, quoted or escaped if it must be.
func appendCSVField(dst []byte, s string, o *CSVRowOptions, forceQuote bool) ([]byte, error) {
	d, q, e := o.delim(), o.quote(), o.Escape
	special := func(c byte) bool { return c == d || c == '\n' || c == '\r' || (q != 0 && c == q) || (e != 0 && c == e) }
	needs := forceQuote
	for i := 0; i < len(s) && !needs; i++ {
		needs = special(s[i])
	}
	if !needs {
		return append(dst, s...), nil
	}
	if q == 0 {
		if e == 0 {
			return dst, fmt.Errorf("the value %q holds the delimiter or a line break, and quoting is disabled; set 'csv.escape-character' or enable quoting", s)
		}
		for i := 0; i < len(s); i++ {
			if special(s[i]) {
				dst = append(dst, e)
			}
			dst = append(dst, s[i])
		}
		return dst, nil
	}
	dst = append(dst, q)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == q:
			dst = append(dst, q, q)
		case e != 0 && s[i] == e:
			dst = append(dst, e, e)
		default:
			dst = append(dst, s[i])
		}
	}
	return append(dst, q), nil
}

// NewCSVRowDecoder returns a decoder of CSV lines into insertions (+I) of
// rows of type rt, a field per column in order, each parsed as
// CAST(field AS type) does.
func NewCSVRowDecoder(rt *types.RowType, o CSVRowOptions) (connector.Decoder[connector.TableRecord], error) {
	if err := checkCSVColumns(rt); err != nil {
		return nil, err
	}
	w := types.NewRowWriter(rt, types.NewArena(0))
	var fields []string
	var quoted []bool
	return decoderFunc[connector.TableRecord](func(line []byte, emit func(connector.TableRecord)) error {
		if o.AllowComments && bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			return nil
		}
		var err error
		fields, quoted, err = splitCSV(line, &o, fields, quoted)
		if err == nil && len(fields) != rt.Len() {
			err = fmt.Errorf("csv: %d fields, but the table has %d columns (%s)", len(fields), rt.Len(), strings.Join(rt.Names(), ", "))
		}
		if err != nil {
			if o.IgnoreParseErrors {
				return nil
			}
			return err
		}
		w.Reset()
		for i, f := range fields {
			t := rt.FieldType(i)
			if !quoted[i] && ((o.HasNullLiteral && f == o.NullLiteral) || (f == "" && (!o.HasNullLiteral || !t.IsString()))) {
				w.SetNull(i)
				continue
			}
			if err := w.ParseText(i, f, nil); err != nil {
				if o.IgnoreParseErrors {
					w.SetNull(i)
					continue
				}
				return fmt.Errorf("csv: field %d: %w", i+1, err)
			}
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: w.Finish()})
		return nil
	}), nil
}

// NewCSVRowEncoder returns an encoder of rows of type rt as CSV lines: a
// field per column, as CAST(column AS STRING) writes it (booleans as true
// and false, as Flink's csv format), NULL as the null literal or an empty
// field (and an empty string as "" quoted, so that it reads back as one).
// It encodes insertions only.
func NewCSVRowEncoder(rt *types.RowType, o CSVRowOptions) (connector.Encoder[connector.TableRecord], error) {
	if err := checkCSVColumns(rt); err != nil {
		return nil, err
	}
	var text []byte
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		if c.Kind != changelog.Insert && c.Kind != changelog.UpdateAfter {
			return dst, fmt.Errorf("csv: cannot write a %v change: the csv format holds insertions only; use 'debezium-json' for a changelog", c.Kind)
		}
		var err error
		for i := 0; i < rt.Len(); i++ {
			if i > 0 {
				dst = append(dst, o.delim())
			}
			if c.Row.IsNull(i) {
				if o.HasNullLiteral {
					if dst, err = appendCSVField(dst, o.NullLiteral, &o, false); err != nil {
						return dst, err
					}
				}
				continue
			}
			t := rt.FieldType(i)
			if t.Kind() == types.KindBoolean {
				text = fmt.Appendf(text[:0], "%t", c.Row.Bool(i))
			} else {
				text = types.AppendText(text[:0], rt, c.Row, i, nil)
			}
			s := string(text)
			force := s == "" || (o.HasNullLiteral && s == o.NullLiteral)
			if dst, err = appendCSVField(dst, s, &o, force && o.quote() != 0); err != nil {
				return dst, fmt.Errorf("csv: column %s: %w", types.QuoteIdentifier(rt.Field(i).Name), err)
			}
		}
		return dst, nil
	}), nil
}

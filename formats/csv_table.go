package formats

import (
	"bytes"
	"fmt"
	"strconv"
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

// csvSpecial marks the characters that make a field quoted or escaped:
// the delimiter, line breaks, the quote and the escape character.
type csvSpecial struct {
	is    [256]bool
	chars []byte
}

func newCSVSpecial(o *CSVRowOptions) *csvSpecial {
	sp := &csvSpecial{}
	for _, c := range []byte{o.delim(), '\n', '\r', o.quote(), o.Escape} {
		if c != 0 && !sp.is[c] {
			sp.is[c] = true
			sp.chars = append(sp.chars, c)
		}
	}
	return sp
}

// has reports whether s holds a special character.
func (sp *csvSpecial) has(s []byte) bool {
	if len(s) >= 64 {
		// A long field: a vectorized search per character is faster.
		for _, c := range sp.chars {
			if bytes.IndexByte(s, c) >= 0 {
				return true
			}
		}
		return false
	}
	for _, c := range s {
		if sp.is[c] {
			return true
		}
	}
	return false
}

// appendCSVField appends s as one field, quoted or escaped if it must be.
func appendCSVField[S string | []byte](dst []byte, s S, o *CSVRowOptions, sp *csvSpecial, forceQuote bool) ([]byte, error) {
	q, e := o.quote(), o.Escape
	needs := forceQuote
	for i := 0; i < len(s) && !needs; i++ {
		needs = sp.is[s[i]]
	}
	if !needs {
		return append(dst, s...), nil
	}
	if q == 0 {
		if e == 0 {
			return dst, fmt.Errorf("the value %q holds the delimiter or a line break, and quoting is disabled; set 'csv.escape-character' or enable quoting", s)
		}
		for i := 0; i < len(s); i++ {
			if sp.is[s[i]] {
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
	e := &csvRowEncoder{rt: rt, o: o, sp: newCSVSpecial(&o), delim: o.delim(), quote: o.quote()}
	e.kinds = make([]types.Kind, rt.Len())
	e.times = make([]types.TimestampTexts, rt.Len())
	for i := range e.kinds {
		e.kinds[i] = rt.FieldType(i).Kind()
	}
	return connector.EncoderFunc[connector.TableRecord](e.encode), nil
}

// csvRowEncoder writes the rows of a table as CSV lines.
type csvRowEncoder struct {
	rt           *types.RowType
	kinds        []types.Kind
	o            CSVRowOptions
	sp           *csvSpecial
	delim, quote byte
	text         []byte // a field that must be quoted or escaped
	// times writes the TIMESTAMP columns, whose values mostly share
	// their second with the row before.
	times []types.TimestampTexts
}

func (e *csvRowEncoder) encode(dst []byte, c connector.TableRecord) ([]byte, error) {
	if c.Kind != changelog.Insert && c.Kind != changelog.UpdateAfter {
		return dst, fmt.Errorf("csv: cannot write a %v change: the csv format holds insertions only; use 'debezium-json' for a changelog", c.Kind)
	}
	o, r := &e.o, c.Row
	var err error
	for i, k := range e.kinds {
		if i > 0 {
			dst = append(dst, e.delim)
		}
		if r.IsNull(i) {
			if o.HasNullLiteral {
				if dst, err = appendCSVField(dst, o.NullLiteral, o, e.sp, false); err != nil {
					return dst, err
				}
			}
			continue
		}
		// The field's text goes into dst as it is, which it mostly may;
		// if it must be quoted or escaped it is taken back out.
		start := len(dst)
		switch k {
		case types.KindBoolean:
			if r.Bool(i) {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			dst = strconv.AppendInt(dst, r.Int64(i), 10)
		case types.KindChar, types.KindVarChar:
			dst = append(dst, r.String(i)...)
		case types.KindTimestamp:
			p := e.rt.FieldType(i).Precision()
			dst = e.times[i].AppendFormat(dst, r.Timestamp(i, p), p)
		default:
			dst = types.AppendText(dst, e.rt, r, i, nil)
		}
		text := dst[start:]
		force := e.quote != 0 && (len(text) == 0 || (o.HasNullLiteral && string(text) == o.NullLiteral))
		if !force && !e.sp.has(text) {
			continue
		}
		e.text = append(e.text[:0], text...)
		if dst, err = appendCSVField(dst[:start], e.text, o, e.sp, force); err != nil {
			return dst, fmt.Errorf("csv: column %s: %w", types.QuoteIdentifier(e.rt.Field(i).Name), err)
		}
	}
	return dst, nil
}

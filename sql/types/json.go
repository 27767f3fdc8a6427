package types

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// JSONTimestampFormat selects the text of timestamps in JSON, as Flink's
// 'json.timestamp-format.standard'.
type JSONTimestampFormat uint8

const (
	// JSONTimestampSQL writes "2015-07-15 08:00:00.001" (and "...Z" for
	// TIMESTAMP_LTZ): Flink's default.
	JSONTimestampSQL JSONTimestampFormat = iota
	// JSONTimestampISO8601 writes "2015-07-15T08:00:00.001" ("...Z").
	JSONTimestampISO8601
)

// JSONMapNullKey says what encoding does with a NULL map key, as Flink's
// 'json.map-null-key.mode'.
type JSONMapNullKey uint8

const (
	// JSONMapNullKeyFail fails the encoding (Flink's default).
	JSONMapNullKeyFail JSONMapNullKey = iota
	// JSONMapNullKeyDrop drops the entry.
	JSONMapNullKeyDrop
	// JSONMapNullKeyLiteral writes the key as JSONOptions.MapNullKeyLiteral.
	JSONMapNullKeyLiteral
)

// JSONOptions are the options of Flink's json format that concern values.
type JSONOptions struct {
	// TimestampFormat is the text of TIMESTAMP and TIMESTAMP_LTZ values.
	TimestampFormat JSONTimestampFormat
	// DecimalAsPlain writes decimals in plain notation
	// ('json.encode.decimal-as-plain-number'); otherwise as Java's
	// BigDecimal.toString (1.0E-7).
	DecimalAsPlain bool
	// MapNullKey and MapNullKeyLiteral handle NULL map keys.
	MapNullKey        JSONMapNullKey
	MapNullKeyLiteral string
	// FailOnMissingField makes decoding fail when a field is absent
	// ('json.fail-on-missing-field'); otherwise it is NULL.
	FailOnMissingField bool
	// IgnoreParseErrors decodes a value that does not convert to its
	// field's type as NULL ('json.ignore-parse-errors'); malformed JSON
	// still fails.
	IgnoreParseErrors bool
	// Debezium writes temporal and DECIMAL values as Debezium's
	// connectors do with their default settings, for readers that convert
	// them by the names of Debezium's logical types (see DebeziumLogical):
	// DATE as days since the epoch; TIME(p) as milliseconds (p <= 3),
	// microseconds (p <= 6) or nanoseconds since midnight; TIMESTAMP(p) as
	// milliseconds, microseconds or nanoseconds since the epoch;
	// TIMESTAMP_LTZ as ISO-8601 text in UTC ("2024-05-06T07:08:09.5Z");
	// DECIMAL as the base64 of its unscaled value in big-endian two's
	// complement. It applies to the row's fields, not to values nested in
	// ROW, ARRAY and MAP fields. Encoding only.
	Debezium bool
}

// AppendJSON appends r (of type rt) as a JSON object, as Flink's json
// format writes it: numbers as numbers (FLOAT and DOUBLE as Java prints
// them, NaN and infinities as strings), DECIMAL as a number, strings
// escaped, bytes in base64, DATE "2020-01-01", TIME "08:00:00", timestamps
// per opts.TimestampFormat (TIMESTAMP_LTZ in UTC with a Z), intervals as
// numbers of months or milliseconds, rows as objects, arrays as arrays,
// maps and multisets as objects (their keys must be strings). opts may be
// nil.
func AppendJSON(dst []byte, rt *RowType, r Row, opts *JSONOptions) ([]byte, error) {
	if opts == nil {
		opts = &JSONOptions{}
	}
	return appendJSONRow(dst, rt, r, opts)
}

func appendJSONRow(dst []byte, rt *RowType, r Row, o *JSONOptions) ([]byte, error) {
	dst = append(dst, '{')
	for i, f := range rt.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, f.Name)
		dst = append(dst, ':')
		if r.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = appendJSONCell(dst, f.Type, r.b, r.slot(i), o); err != nil {
			return nil, fmt.Errorf("field %s: %w", QuoteIdentifier(f.Name), err)
		}
	}
	return append(dst, '}'), nil
}

func appendJSONCell(dst []byte, t Type, b string, slot uint64, o *JSONOptions) ([]byte, error) {
	if o.Debezium {
		if out, ok, err := appendDebeziumCell(dst, t, b, slot); ok {
			return out, err
		}
		if t.kind == KindRow || t.kind == KindArray || t.kind == KindMap || t.kind == KindMultiset {
			// Values nested in them are written as without the option.
			plain := *o
			plain.Debezium = false
			o = &plain
		}
	}
	switch t.kind {
	case KindNull:
		return append(dst, "null"...), nil
	case KindBoolean:
		return strconv.AppendBool(dst, slot != 0), nil
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindIntervalDayTime:
		return strconv.AppendInt(dst, int64(slot), 10), nil
	case KindIntervalYearMonth:
		return strconv.AppendInt(dst, int64(int32(slot)), 10), nil
	case KindFloat, KindDouble:
		f, bits := math.Float64frombits(slot), 64
		if t.kind == KindFloat {
			f, bits = float64(math.Float32frombits(uint32(slot))), 32
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			dst = append(dst, '"')
			dst = AppendJavaFloat(dst, f, bits)
			return append(dst, '"'), nil
		}
		return AppendJavaFloat(dst, f, bits), nil
	case KindDecimal:
		d := decimalAt(b, slot, int(t.p), int(t.s))
		if o.DecimalAsPlain {
			return d.AppendText(dst), nil
		}
		return append(dst, d.JavaString()...), nil
	case KindChar, KindVarChar:
		return appendJSONString(dst, varAt(b, slot)), nil
	case KindBinary, KindVarBinary:
		v := varAt(b, slot)
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, []byte(v))
		return append(dst, '"'), nil
	case KindDate:
		dst = append(dst, '"')
		dst = Date(int32(slot)).AppendText(dst)
		return append(dst, '"'), nil
	case KindTime:
		dst = append(dst, '"')
		dst = Time(slot).AppendFormat(dst, 0)
		return append(dst, '"'), nil
	case KindTimestamp, KindTimestampLTZ:
		ts := timestampAt(b, slot, int(t.p))
		sep := byte(' ')
		if o.TimestampFormat == JSONTimestampISO8601 {
			sep = 'T'
		}
		dst = append(dst, '"')
		dst = ts.appendSQL(dst, sep, 0)
		if t.kind == KindTimestampLTZ {
			dst = append(dst, 'Z')
		}
		return append(dst, '"'), nil
	case KindRow:
		return appendJSONRow(dst, t.row, Row{b: varAt(b, slot), n: int32(t.row.Len())}, o)
	case KindArray:
		a := Array{b: varAt(b, slot)}
		dst = append(dst, '[')
		for j := 0; j < a.Len(); j++ {
			if j > 0 {
				dst = append(dst, ',')
			}
			if a.IsNull(j) {
				dst = append(dst, "null"...)
				continue
			}
			var err error
			if dst, err = appendJSONCell(dst, *t.elem, a.b, a.slot(j), o); err != nil {
				return nil, fmt.Errorf("element %d: %w", j, err)
			}
		}
		return append(dst, ']'), nil
	case KindMap, KindMultiset:
		if !t.Elem().IsString() {
			return nil, fmt.Errorf("JSON objects have string keys, %s has not; cast the keys to STRING", t)
		}
		m := Map{b: varAt(b, slot)}
		ks, vs := m.Keys(), m.Values()
		dst = append(dst, '{')
		first := true
		for j := 0; j < ks.Len(); j++ {
			key := ks.String(j)
			if ks.IsNull(j) {
				switch o.MapNullKey {
				case JSONMapNullKeyDrop:
					continue
				case JSONMapNullKeyLiteral:
					key = o.MapNullKeyLiteral
				default:
					return nil, fmt.Errorf("a map has a NULL key: JSON cannot encode it; drop such entries or write them with a literal key ('json.map-null-key.mode')")
				}
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendJSONString(dst, key)
			dst = append(dst, ':')
			if vs.IsNull(j) {
				dst = append(dst, "null"...)
				continue
			}
			var err error
			if dst, err = appendJSONCell(dst, t.Value(), vs.b, vs.slot(j), o); err != nil {
				return nil, fmt.Errorf("value of key %q: %w", key, err)
			}
		}
		return append(dst, '}'), nil
	}
	return nil, fmt.Errorf("JSON cannot encode %s", t)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaping quotes,
// backslashes and control characters (with \b \t \n \f \r where they
// exist), and invalid UTF-8 as U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// JSONDecoder decodes JSON objects into rows of one type, as Flink's json
// format reads them: fields by exact name, unknown fields ignored, absent
// fields NULL (or an error with FailOnMissingField). Numbers may come as
// JSON numbers or strings; strings of a field whose JSON value is an
// object or array take its JSON text. It is reusable and not safe for
// concurrent use.
type JSONDecoder struct {
	opts  JSONOptions
	root  *jdRow
	arena *Arena
	sc    jsonScanner
	path  []pathElem // where the value being decoded is, for errors
}

// pathElem is a step of the path to a value: a field, an index or a key.
type pathElem struct {
	name  string
	index int
	kind  uint8 // 'f' field, 'i' index, 'k' key
}

// pathString renders the path ("row.`a`[2]["k"]").
func (d *JSONDecoder) pathString() string {
	s := "row"
	for _, e := range d.path {
		switch e.kind {
		case 'f':
			s += "." + QuoteIdentifier(e.name)
		case 'i':
			s += fmt.Sprintf("[%d]", e.index)
		case 'k':
			s += "[" + strconv.Quote(e.name) + "]"
		}
	}
	return s
}

// jdRow is the decoding plan of a row type.
type jdRow struct {
	rt     *RowType
	w      *RowWriter
	nodes  []*jdNode
	seen   []bool
	byName map[string]int
}

// jdNode is the decoding plan of a value of one type.
type jdNode struct {
	t    Type
	row  *jdRow       // ROW
	arr  *ArrayWriter // ARRAY
	elem *jdNode      // ARRAY element, MAP/MULTISET value
	mw   *MapWriter   // MAP, MULTISET
}

// NewJSONDecoder returns a decoder of JSON objects into rows of type rt in
// arena (a fresh one if nil). It fails for a MAP or MULTISET whose keys
// are not strings.
func NewJSONDecoder(rt *RowType, arena *Arena, opts *JSONOptions) (*JSONDecoder, error) {
	d := &JSONDecoder{arena: arena}
	if d.arena == nil {
		d.arena = NewArena(0)
	}
	if opts != nil {
		d.opts = *opts
	}
	root, err := newJDRow(rt, d.arena)
	if err != nil {
		return nil, err
	}
	d.root = root
	return d, nil
}

func newJDRow(rt *RowType, arena *Arena) (*jdRow, error) {
	r := &jdRow{rt: rt, w: NewRowWriter(rt, arena), seen: make([]bool, rt.Len()), byName: rt.byName}
	for _, f := range rt.fields {
		n, err := newJDNode(f.Type)
		if err != nil {
			return nil, fmt.Errorf("types: JSON field %s: %w", QuoteIdentifier(f.Name), err)
		}
		r.nodes = append(r.nodes, n)
	}
	return r, nil
}

func newJDNode(t Type) (*jdNode, error) {
	n := &jdNode{t: t}
	var err error
	switch t.kind {
	case KindRow:
		n.row, err = newJDRow(t.row, nil)
	case KindArray:
		n.arr = NewArrayWriter(*t.elem)
		n.elem, err = newJDNode(*t.elem)
	case KindMap, KindMultiset:
		if !t.Elem().IsString() {
			return nil, fmt.Errorf("JSON objects have string keys, %s has not", t)
		}
		n.mw = NewMapWriter(t)
		n.elem, err = newJDNode(t.Value())
	}
	return n, err
}

// Decode decodes one JSON object into a row. Errors name the field (with
// its path for nested values), the expected type and what was found.
func (d *JSONDecoder) Decode(data []byte) (Row, error) {
	d.sc = jsonScanner{data: data, buf: d.sc.buf}
	d.path = d.path[:0]
	d.sc.ws()
	if err := d.decodeRow(d.root); err != nil {
		return Row{}, err
	}
	d.sc.ws()
	if d.sc.pos != len(data) {
		return Row{}, d.sc.errorf("unexpected %s after the object", d.sc.near())
	}
	return d.root.w.Finish(), nil
}

// DecodeInto decodes one JSON object into w (whose type must be the
// decoder's) without finishing it, so that the caller can set more fields.
func (d *JSONDecoder) DecodeInto(w *RowWriter, data []byte) error {
	saved := d.root.w
	d.root.w = w
	defer func() { d.root.w = saved }()
	d.sc = jsonScanner{data: data, buf: d.sc.buf}
	d.path = d.path[:0]
	d.sc.ws()
	if err := d.decodeRow(d.root); err != nil {
		return err
	}
	d.sc.ws()
	if d.sc.pos != len(data) {
		return d.sc.errorf("unexpected %s after the object", d.sc.near())
	}
	return nil
}

// JSONError is an error of decoding JSON into a row.
type JSONError struct {
	// Path locates the value ("row.`a`[2]"); empty for a syntax error.
	Path string
	// Offset is the byte offset in the input.
	Offset int
	// Problem says what is wrong.
	Problem string
}

// Error renders the problem.
func (e *JSONError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("types: malformed JSON at offset %d: %s", e.Offset, e.Problem)
	}
	return fmt.Sprintf("types: JSON %s at offset %d: %s", e.Path, e.Offset, e.Problem)
}

func (d *JSONDecoder) decodeRow(n *jdRow) error {
	sc := &d.sc
	w := n.w
	w.Reset()
	clear(n.seen)
	if !sc.consume('{') {
		return &JSONError{Path: d.pathString(), Offset: sc.pos, Problem: "expected a JSON object, found " + sc.near()}
	}
	sc.ws()
	if !sc.consume('}') {
		for {
			sc.ws()
			key, err := sc.str()
			if err != nil {
				return err
			}
			sc.ws()
			if !sc.consume(':') {
				return sc.errorf("expected ':' after a key, found %s", sc.near())
			}
			sc.ws()
			i, ok := n.byName[string(key)]
			if !ok {
				if err := sc.skip(0); err != nil {
					return err
				}
			} else {
				n.seen[i] = true
				d.path = append(d.path, pathElem{name: n.rt.fields[i].Name, kind: 'f'})
				if err := d.decodeCell(&w.cells, i, n.nodes[i]); err != nil {
					return err
				}
				d.path = d.path[:len(d.path)-1]
			}
			sc.ws()
			if sc.consume(',') {
				continue
			}
			if sc.consume('}') {
				break
			}
			return sc.errorf("expected ',' or '}' in an object, found %s", sc.near())
		}
	}
	for i, seen := range n.seen {
		if !seen && d.opts.FailOnMissingField {
			return &JSONError{Path: d.pathString(), Offset: sc.pos, Problem: fmt.Sprintf("field %s is missing", QuoteIdentifier(n.rt.fields[i].Name))}
		}
	}
	return nil
}

// decodeCell decodes the next JSON value as cell i of type n.t.
func (d *JSONDecoder) decodeCell(c *cells, i int, n *jdNode) error {
	sc := &d.sc
	start := sc.pos
	if sc.literal("null") {
		c.setNull(i)
		return nil
	}
	depth := len(d.path)
	err := d.decodeValue(c, i, n)
	if err == nil {
		return nil
	}
	if je, ok := err.(*JSONError); ok && je.Path == "" {
		return err // malformed JSON: never ignored
	}
	if d.opts.IgnoreParseErrors {
		// Skip whatever is left of the value and make it NULL.
		d.path = d.path[:depth]
		sc.pos = start
		if serr := sc.skip(0); serr != nil {
			return serr
		}
		c.setNull(i)
		return nil
	}
	return err
}

func (d *JSONDecoder) mismatch(t Type, found string, offset int) error {
	return &JSONError{Path: d.pathString(), Offset: offset, Problem: fmt.Sprintf("expected %s, found %s", t, found)}
}

func (d *JSONDecoder) decodeValue(c *cells, i int, n *jdNode) error {
	sc := &d.sc
	t := n.t
	start := sc.pos
	switch t.kind {
	case KindRow:
		if sc.peek() != '{' {
			return d.mismatch(t, sc.near(), start)
		}
		if err := d.decodeRow(n.row); err != nil {
			return err
		}
		c.beginVar(i)
		c.vbuf = n.row.w.AppendTo(c.vbuf)
		c.endVar(i)
		return nil
	case KindArray:
		if !sc.consume('[') {
			return d.mismatch(t, sc.near(), start)
		}
		// The element writer is this node's: nested arrays of the same
		// node are finished before the next element starts.
		aw := n.arr
		aw.Reset()
		sc.ws()
		if !sc.consume(']') {
			for j := 0; ; j++ {
				sc.ws()
				d.path = append(d.path, pathElem{index: j, kind: 'i'})
				if err := d.decodeCell(&aw.cells, aw.next(), n.elem); err != nil {
					return err
				}
				d.path = d.path[:len(d.path)-1]
				sc.ws()
				if sc.consume(',') {
					continue
				}
				if sc.consume(']') {
					break
				}
				return sc.errorf("expected ',' or ']' in an array, found %s", sc.near())
			}
		}
		c.beginVar(i)
		c.vbuf = aw.AppendTo(c.vbuf)
		c.endVar(i)
		return nil
	case KindMap, KindMultiset:
		if !sc.consume('{') {
			return d.mismatch(t, sc.near(), start)
		}
		mw := n.mw
		mw.Reset()
		sc.ws()
		if !sc.consume('}') {
			for {
				sc.ws()
				key, err := sc.str()
				if err != nil {
					return err
				}
				mw.keys.AppendBytes(key)
				sc.ws()
				if !sc.consume(':') {
					return sc.errorf("expected ':' after a key, found %s", sc.near())
				}
				sc.ws()
				d.path = append(d.path, pathElem{name: string(key), kind: 'k'})
				if err := d.decodeCell(&mw.values.cells, mw.values.next(), n.elem); err != nil {
					return err
				}
				d.path = d.path[:len(d.path)-1]
				sc.ws()
				if sc.consume(',') {
					continue
				}
				if sc.consume('}') {
					break
				}
				return sc.errorf("expected ',' or '}' in an object, found %s", sc.near())
			}
		}
		c.beginVar(i)
		c.vbuf = mw.AppendTo(c.vbuf)
		c.endVar(i)
		return nil
	}
	// A scalar: its text, from a string or a bare token.
	var text []byte
	quoted := false
	switch ch := sc.peek(); {
	case ch == '"':
		s, err := sc.str()
		if err != nil {
			return err
		}
		text, quoted = s, true
	case ch == '{' || ch == '[':
		if !t.IsString() {
			return d.mismatch(t, sc.near(), start)
		}
		if err := sc.skip(0); err != nil {
			return err
		}
		c.setVar(i, string(sc.data[start:sc.pos])) // the JSON text, as Flink
		return nil
	default:
		text = sc.token()
		if len(text) == 0 {
			return sc.errorf("expected a value, found %s", sc.near())
		}
		if !validBareToken(text) {
			return sc.errorf("invalid token %q", text)
		}
	}
	found := func() string {
		if quoted {
			return "string " + strconv.Quote(string(text))
		}
		return string(text)
	}
	s := unsafeString(text) // parsed below, never kept
	switch t.kind {
	case KindBoolean:
		switch {
		case !quoted && s == "true", quoted && equalFoldASCII(s, "true"):
			c.setFixed(i, 1)
		case !quoted && s == "false", quoted && equalFoldASCII(s, "false"):
			c.setFixed(i, 0)
		default:
			return d.mismatch(t, found(), start)
		}
	case KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindIntervalYearMonth, KindIntervalDayTime:
		v, err := parseInteger(s, Type{kind: intKindOf(t.kind)})
		if err != nil && !quoted {
			// A JSON number with a fraction or exponent: its integral part.
			f, ferr := strconv.ParseFloat(s, 64)
			lo, hi := intRange(t.kind)
			if ferr == nil && f >= float64(lo) && f <= float64(hi) {
				v, err = int64(f), nil
			}
		}
		if err != nil || (quoted && !isPlainInteger(s)) {
			return d.mismatch(t, found(), start)
		}
		c.setFixed(i, uint64(v))
	case KindFloat, KindDouble:
		f, err := parseJavaFloat(s, t)
		if err != nil || (!quoted && (s == "NaN" || s == "Infinity" || s == "-Infinity")) {
			return d.mismatch(t, found(), start)
		}
		if t.kind == KindFloat {
			c.setFixed(i, uint64(Float32Bits(float32(f))))
		} else {
			c.setFixed(i, Float64Bits(f))
		}
	case KindDecimal:
		v, err := ParseDecimal(s)
		if err != nil {
			return d.mismatch(t, found(), start)
		}
		if err := c.setDecimal(i, v, t); err != nil {
			// Flink reads a decimal beyond the precision as NULL.
			c.setNull(i)
		}
	case KindChar, KindVarChar:
		c.setVarBytes(i, text)
	case KindBinary, KindVarBinary:
		if !quoted {
			return d.mismatch(t, found(), start)
		}
		c.beginVar(i)
		var err error
		c.vbuf, err = base64.StdEncoding.AppendDecode(c.vbuf, text)
		if err != nil {
			c.vbuf = c.vbuf[:c.vstart[i]]
			c.setNull(i)
			return &JSONError{Path: d.pathString(), Offset: start, Problem: fmt.Sprintf("expected base64 bytes for %s: %v", t, err)}
		}
		c.endVar(i)
	case KindDate:
		v, ok := parseISODate(s)
		if !quoted || !ok {
			return d.mismatch(t, found()+" (use yyyy-MM-dd)", start)
		}
		c.setFixed(i, uint64(int64(v)))
	case KindTime:
		v, err := ParseTime(s, 0)
		if !quoted || err != nil || len(s) < 8 {
			return d.mismatch(t, found()+" (use HH:mm:ss)", start)
		}
		c.setFixed(i, uint64(v))
	case KindTimestamp, KindTimestampLTZ:
		sep, form := byte(' '), "yyyy-MM-dd HH:mm:ss[.fraction]"
		if d.opts.TimestampFormat == JSONTimestampISO8601 {
			sep, form = 'T', "yyyy-MM-ddTHH:mm:ss[.fraction]"
		}
		if t.kind == KindTimestampLTZ {
			form += "Z"
			if len(s) == 0 || s[len(s)-1] != 'Z' {
				return d.mismatch(t, found()+" (use "+form+")", start)
			}
			s = s[:len(s)-1]
		}
		ts, err := parseTimestamp(s, sep, true)
		if !quoted || err != nil {
			return d.mismatch(t, found()+" (use "+form+")", start)
		}
		c.setTimestamp(i, ts, int(t.p))
	default:
		return d.mismatch(t, found(), start)
	}
	return nil
}

func intKindOf(k Kind) Kind {
	switch k {
	case KindIntervalYearMonth:
		return KindInt
	case KindIntervalDayTime:
		return KindBigInt
	}
	return k
}

// isPlainInteger reports whether s (blanks around allowed) is an optional
// sign and digits, as Java's Integer.parseInt takes.
func isPlainInteger(s string) bool {
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	if i < j && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i == j {
		return false
	}
	for ; i < j; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parseISODate parses yyyy-MM-dd strictly.
func parseISODate(s string) (Date, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := atoiDigits(s[:4], 4)
	m, ok2 := atoiDigits(s[5:7], 2)
	d, ok3 := atoiDigits(s[8:], 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return DateOf(y, m, d), true
}

// validBareToken reports whether a bare token is a JSON literal or number.
func validBareToken(t []byte) bool {
	s := string(t)
	if s == "true" || s == "false" || s == "null" {
		return true
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i == len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}

// jsonScanner reads JSON text.
type jsonScanner struct {
	data []byte
	pos  int
	buf  []byte // unescaped string scratch
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return &JSONError{Offset: s.pos, Problem: fmt.Sprintf(format, args...)}
}

func (s *jsonScanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jsonScanner) consume(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		return true
	}
	return false
}

// near describes the input at the current position.
func (s *jsonScanner) near() string {
	if s.pos >= len(s.data) {
		return "the end of the input"
	}
	end := min(s.pos+20, len(s.data))
	return strconv.Quote(string(s.data[s.pos:end]))
}

// literal consumes lit if it comes next as a whole token.
func (s *jsonScanner) literal(lit string) bool {
	end := s.pos + len(lit)
	if end > len(s.data) || string(s.data[s.pos:end]) != lit {
		return false
	}
	if end < len(s.data) && isTokenByte(s.data[end]) {
		return false
	}
	s.pos = end
	return true
}

func isTokenByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// token consumes a bare token (number or literal).
func (s *jsonScanner) token() []byte {
	start := s.pos
	for s.pos < len(s.data) && isTokenByte(s.data[s.pos]) {
		s.pos++
	}
	return s.data[start:s.pos]
}

// str consumes a string and returns its unescaped bytes (valid until the
// next call).
func (s *jsonScanner) str() ([]byte, error) {
	if !s.consume('"') {
		return nil, s.errorf("expected a string, found %s", s.near())
	}
	start := s.pos
	// Fast path: no escapes.
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		if c == '"' {
			v := s.data[start:s.pos]
			s.pos++
			if !utf8.Valid(v) {
				return nil, &JSONError{Offset: start, Problem: "a string is not valid UTF-8"}
			}
			return v, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		s.pos++
	}
	s.buf = append(s.buf[:0], s.data[start:s.pos]...)
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !utf8.Valid(s.buf) {
				return nil, &JSONError{Offset: start, Problem: "a string is not valid UTF-8"}
			}
			return s.buf, nil
		case c < 0x20:
			return nil, s.errorf("control character %#x in a string", c)
		case c != '\\':
			s.buf = append(s.buf, c)
			s.pos++
			continue
		}
		s.pos++
		if s.pos >= len(s.data) {
			break
		}
		e := s.data[s.pos]
		s.pos++
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					s.pos += 2
					if r2, ok = s.hex4(); !ok {
						return nil, s.errorf("bad \\u escape")
					}
				}
				r = utf16.DecodeRune(r, r2)
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if s.pos+4 > len(s.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	s.pos += 4
	return rune(v), true
}

// skip consumes one value of any kind.
func (s *jsonScanner) skip(depth int) error {
	if depth > 1000 {
		return s.errorf("nesting deeper than 1000")
	}
	s.ws()
	switch s.peek() {
	case '"':
		_, err := s.str()
		return err
	case '{', '[':
		open := s.data[s.pos]
		closeCh := byte('}')
		if open == '[' {
			closeCh = ']'
		}
		s.pos++
		s.ws()
		if s.consume(closeCh) {
			return nil
		}
		for {
			s.ws()
			if open == '{' {
				if _, err := s.str(); err != nil {
					return err
				}
				s.ws()
				if !s.consume(':') {
					return s.errorf("expected ':' after a key, found %s", s.near())
				}
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.consume(',') {
				continue
			}
			if s.consume(closeCh) {
				return nil
			}
			return s.errorf("expected ',' or '%c', found %s", closeCh, s.near())
		}
	}
	t := s.token()
	if len(t) == 0 || !validBareToken(t) {
		return s.errorf("expected a value, found %s", s.near())
	}
	return nil
}

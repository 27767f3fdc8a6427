package formats

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// rawSpec is the spec of the "raw" format.
var rawSpec = connector.Spec{
	Name: "raw",
	Kind: connector.FormatKind,
	Description: "A message's bytes as one value, as Flink's raw format reads and writes them: the table has a single physical column, " +
		"STRING/VARCHAR/CHAR (the bytes as text in 'raw.charset'), BYTES/VARBINARY/BINARY (the bytes as they are), or BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE " +
		"(the value's fixed-size binary encoding in 'raw.endianness'). An empty message is NULL for the numeric types; NULL is written as an empty message. " +
		"For the Go API the record type is string or []byte.",
	Options: []connector.Option{
		{Key: "raw.charset", Type: connector.String, Default: "UTF-8",
			Description: "The character set of the text of a STRING, VARCHAR or CHAR column: UTF-8, or a name of the WHATWG Encoding Standard (ISO-8859-1, windows-1252, UTF-16BE, UTF-16LE, GBK, Shift_JIS, …).",
			Check: func(v string) error {
				_, err := rawCharset(v)
				return err
			}},
		{Key: "raw.endianness", Type: connector.Enum, Default: "big-endian", Values: []string{"big-endian", "little-endian"},
			Description: "The byte order of the binary encoding of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT and DOUBLE values."},
	},
}

// rawCharset returns the encoding called name, nil for UTF-8 (the text is
// taken as it is). ISO-8859-1 and its Java aliases are Latin-1, as in Java
// (and so in Flink), not windows-1252, which the WHATWG Encoding Standard
// gives that label: the two differ at the bytes 0x80 to 0x9F.
func rawCharset(name string) (encoding.Encoding, error) {
	switch strings.ToUpper(strings.ReplaceAll(name, "_", "-")) {
	case "UTF-8", "UTF8":
		return nil, nil
	case "UTF-16":
		return unicode.UTF16(unicode.BigEndian, unicode.UseBOM), nil
	case "ISO-8859-1", "ISO8859-1", "8859-1", "LATIN1", "L1", "ISO-8859-1:1987", "ISO-IR-100", "CP819", "IBM819", "IBM-819", "CSISOLATIN1", "819":
		return charmap.ISO8859_1, nil
	}
	e, err := htmlindex.Get(name)
	if err != nil {
		return nil, fmt.Errorf("unknown character set %q: give UTF-8 or a name of the WHATWG Encoding Standard, such as ISO-8859-1, windows-1252, UTF-16LE or GBK", name)
	}
	return e, nil
}

// rawCodec converts between messages and the single value of a raw
// format's rows.
type rawCodec struct {
	rt      *types.RowType
	t       types.Type
	charset encoding.Encoding
	order   byteOrder
}

// byteOrder reads and appends fixed-size integers.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func newRawCodec(ctx connector.Context) (*rawCodec, error) {
	c := &rawCodec{order: binary.BigEndian}
	if ctx.Options.String("raw.endianness") == "little-endian" {
		c.order = binary.LittleEndian
	}
	cs, err := rawCharset(ctx.Options.String("raw.charset"))
	if err != nil {
		return nil, fmt.Errorf("raw: option 'raw.charset': %w", err)
	}
	c.charset = cs
	if ctx.Table == nil {
		return c, nil
	}
	c.rt = ctx.Table.Schema
	table := "the table"
	if ctx.Table.Name != "" {
		table = "table " + ctx.Table.Name
	}
	if c.rt.Len() != 1 {
		return nil, fmt.Errorf("raw: %s has %d physical columns, and the raw format reads and writes one: declare a single column (STRING or BYTES) and put any others in metadata or computed columns",
			table, c.rt.Len())
	}
	c.t = c.rt.Field(0).Type
	switch c.t.Kind() {
	case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary, types.KindBoolean,
		types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt, types.KindFloat, types.KindDouble:
		return c, nil
	}
	return nil, fmt.Errorf("raw: column %s of %s is %s, which the raw format cannot hold; declare it STRING, BYTES, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE",
		types.QuoteIdentifier(c.rt.Field(0).Name), table, c.t)
}

// width is the size of the binary encoding of the column's values, 0 for
// text and bytes.
func (c *rawCodec) width() int {
	switch c.t.Kind() {
	case types.KindBoolean, types.KindTinyInt:
		return 1
	case types.KindSmallInt:
		return 2
	case types.KindInt, types.KindFloat:
		return 4
	case types.KindBigInt, types.KindDouble:
		return 8
	}
	return 0
}

// text decodes a message's text into UTF-8.
func (c *rawCodec) text(data []byte) (string, error) {
	if c.charset == nil {
		return string(data), nil
	}
	b, err := c.charset.NewDecoder().Bytes(data)
	if err != nil {
		return "", fmt.Errorf("raw: the message is not text in the character set of 'raw.charset': %w", err)
	}
	return string(b), nil
}

// appendText encodes UTF-8 text in the charset.
func (c *rawCodec) appendText(dst []byte, s string) ([]byte, error) {
	if c.charset == nil {
		return append(dst, s...), nil
	}
	b, err := c.charset.NewEncoder().String(s)
	if err != nil {
		return dst, fmt.Errorf("raw: the text cannot be written in the character set of 'raw.charset': %w", err)
	}
	return append(dst, b...), nil
}

// decode sets the row's value from a message.
func (c *rawCodec) decode(w *types.RowWriter, data []byte) error {
	if n := c.width(); n > 0 {
		if len(data) == 0 {
			return nil // NULL
		}
		if len(data) != n {
			return fmt.Errorf("raw: a value of type %s is %d bytes, and the message has %d", c.t, n, len(data))
		}
	}
	switch c.t.Kind() {
	case types.KindChar, types.KindVarChar:
		s, err := c.text(data)
		if err != nil {
			return err
		}
		w.SetString(0, s)
	case types.KindBinary, types.KindVarBinary:
		w.SetBytes(0, data)
	case types.KindBoolean:
		w.SetBool(0, data[0] != 0) // as Flink: any byte but 0 is TRUE
	case types.KindTinyInt:
		w.SetInt64(0, int64(int8(data[0])))
	case types.KindSmallInt:
		w.SetInt64(0, int64(int16(c.order.Uint16(data))))
	case types.KindInt:
		w.SetInt64(0, int64(int32(c.order.Uint32(data))))
	case types.KindBigInt:
		w.SetInt64(0, int64(c.order.Uint64(data)))
	case types.KindFloat:
		w.SetFloat32(0, math.Float32frombits(c.order.Uint32(data)))
	case types.KindDouble:
		w.SetFloat64(0, math.Float64frombits(c.order.Uint64(data)))
	}
	return nil
}

// encode appends the message of a row's value.
func (c *rawCodec) encode(dst []byte, r types.Row) ([]byte, error) {
	if r.Len() == 0 || r.IsNull(0) {
		return dst, nil
	}
	switch c.t.Kind() {
	case types.KindChar, types.KindVarChar:
		return c.appendText(dst, r.String(0))
	case types.KindBinary, types.KindVarBinary:
		return append(dst, r.BinaryString(0)...), nil
	case types.KindBoolean:
		if r.Bool(0) {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case types.KindTinyInt:
		return append(dst, byte(r.Int64(0))), nil
	case types.KindSmallInt:
		return c.order.AppendUint16(dst, uint16(r.Int64(0))), nil
	case types.KindInt:
		return c.order.AppendUint32(dst, uint32(r.Int64(0))), nil
	case types.KindBigInt:
		return c.order.AppendUint64(dst, uint64(r.Int64(0))), nil
	case types.KindFloat:
		return c.order.AppendUint32(dst, math.Float32bits(r.Float32(0))), nil
	default: // DOUBLE
		return c.order.AppendUint64(dst, math.Float64bits(r.Float64(0))), nil
	}
}

type rawFormat struct{}

func (rawFormat) Spec() connector.Spec { return rawSpec }

func (rawFormat) NewDecoder(ctx connector.Context) (any, error) {
	c, err := newRawCodec(ctx)
	if err != nil {
		return nil, err
	}
	if ctx.Table == nil {
		switch ctx.RecordType {
		case reflect.TypeFor[string]():
			return connector.DecoderFunc[any](func(data []byte) (any, error) { return c.text(data) }), nil
		case reflect.TypeFor[[]byte]():
			return connector.DecoderFunc[any](func(data []byte) (any, error) { return append([]byte(nil), data...), nil }), nil
		}
		return nil, fmt.Errorf("raw: records of type %v: the raw format reads string or []byte records", ctx.RecordType)
	}
	w := types.NewRowWriter(c.rt, types.NewArena(0))
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		if err := c.decode(w, data); err != nil {
			w.Reset()
			return err
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: w.Finish()})
		return nil
	}), nil
}

func (rawFormat) NewEncoder(ctx connector.Context) (any, error) {
	c, err := newRawCodec(ctx)
	if err != nil {
		return nil, err
	}
	if ctx.Table == nil {
		switch ctx.RecordType {
		case reflect.TypeFor[string]():
			return connector.EncoderFunc[any](func(dst []byte, v any) ([]byte, error) { return c.appendText(dst, v.(string)) }), nil
		case reflect.TypeFor[[]byte]():
			return connector.EncoderFunc[any](func(dst []byte, v any) ([]byte, error) { return append(dst, v.([]byte)...), nil }), nil
		}
		return nil, fmt.Errorf("raw: records of type %v: the raw format writes string or []byte records", ctx.RecordType)
	}
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, r connector.TableRecord) ([]byte, error) {
		if r.Kind != changelog.Insert && r.Kind != changelog.UpdateAfter {
			return dst, fmt.Errorf("raw: cannot write a %v change: the raw format holds insertions only; use 'debezium-json' for a changelog", r.Kind)
		}
		return c.encode(dst, r.Row)
	}), nil
}

func init() { connector.Register(rawFormat{}) }

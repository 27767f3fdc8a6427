package kafka

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// metadataKeys are the metadata columns the source offers, as Flink names
// them, with the type kinds each may be declared as.
var metadataKeys = map[string][]types.Kind{
	"topic":     {types.KindVarChar, types.KindChar},
	"partition": {types.KindInt, types.KindBigInt},
	"offset":    {types.KindBigInt},
	"timestamp": {types.KindTimestampLTZ, types.KindTimestamp},
}

var metadataOffered = []string{"topic", "partition", "offset", "timestamp"}

// formatContext returns ctx with its options replaced by those choosing
// format name with options opts, and its table by t, for
// connector.DecoderFor and EncoderFor.
func formatContext(ctx connector.Context, name string, opts map[string]string, t *connector.Table) (connector.Context, error) {
	spec := connector.Spec{Name: ctx.Options.Spec().Name, Kind: connector.SourceKind | connector.SinkKind, Formats: formats}
	m := map[string]string{connector.FormatKey: name}
	for k, v := range opts {
		m[name+"."+k] = v
	}
	o, err := spec.Validate(m)
	if err != nil {
		return ctx, err
	}
	ctx.Options, ctx.Table = o, t
	return ctx, nil
}

// rowCodec is how a table's rows map to messages: which columns the key
// and the value hold, and the formats' tables.
type rowCodec struct {
	table    *connector.Table
	keyCols  []int // columns of the key, in key order; nil without a key format
	valCols  []int // columns of the value
	keyTable *connector.Table
	valTable *connector.Table
	meta     []string // metadata keys, appended after the physical columns
}

// project returns the table of the columns cols of t.
func project(t *connector.Table, cols []int) *connector.Table {
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = t.Schema.Field(c)
	}
	return &connector.Table{Schema: types.MustRowType(fs...)}
}

// newRowCodec reads the key and value columns of a table.
func newRowCodec(c *config, o connector.Options, t *connector.Table, source bool) (*rowCodec, error) {
	rc := &rowCodec{table: t}
	if source {
		for i, k := range t.Metadata {
			kinds, ok := metadataKeys[k]
			if !ok {
				return nil, connector.UnknownMetadata(c.connector, k, metadataOffered...)
			}
			if !contains(kinds, t.MetadataTypes[i].Kind()) {
				return nil, fmt.Errorf("%s %q: metadata column %q is %v; declare it as %v", c.connector, c.name, k, t.MetadataTypes[i], kinds[0])
			}
			if k == "timestamp" && t.MetadataTypes[i].Precision() > 3 {
				return nil, fmt.Errorf("%s %q: metadata column 'timestamp' is %v; declare it as TIMESTAMP_LTZ(3): Kafka timestamps are milliseconds", c.connector, c.name, t.MetadataTypes[i])
			}
		}
		rc.meta = t.Metadata
	}
	switch {
	case c.upsert:
		if len(t.PrimaryKey) == 0 {
			return nil, fmt.Errorf("%s %q: the table has no PRIMARY KEY; upsert-kafka keys its messages by it: declare PRIMARY KEY (...) NOT ENFORCED", c.connector, c.name)
		}
		rc.keyCols = t.PrimaryKey
	case isSet(o, "key.fields"):
		for _, n := range strings.Split(str(o, "key.fields"), ";") {
			n = strings.TrimSpace(n)
			i := t.Column(n)
			if i < 0 {
				return nil, c.optErr("key.fields", fmt.Sprintf("names %q, which is not a physical column of the table", n))
			}
			rc.keyCols = append(rc.keyCols, i)
		}
	}
	exceptKey := str(o, "value.fields-include") == "EXCEPT_KEY"
	for i := 0; i < t.Schema.Len(); i++ {
		if exceptKey && contains(rc.keyCols, i) {
			continue
		}
		rc.valCols = append(rc.valCols, i)
	}
	if len(rc.valCols) == 0 {
		return nil, c.optErr("value.fields-include", "= 'EXCEPT_KEY' leaves no column for the value; use 'ALL'")
	}
	if rc.keyCols != nil {
		rc.keyTable = project(t, rc.keyCols)
	}
	rc.valTable = project(t, rc.valCols)
	return rc, nil
}

func contains[E comparable](s []E, v E) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// tableDecoder decodes messages into rows of a table: physical columns
// from the key and the value, then the metadata columns.
type tableDecoder struct {
	rc     *rowCodec
	upsert bool
	key    connector.Decoder[connector.TableRecord]
	val    connector.Decoder[connector.TableRecord]
	w      *types.RowWriter
	arena  *types.Arena

	keyRow  types.Row
	hasKey  bool
	rec     *kgo.Record
	emitOut func(connector.TableRecord)
	emitVal func(connector.TableRecord)
	keyErr  error
}

func newTableDecoder(rc *rowCodec, upsert bool, key, val connector.Decoder[connector.TableRecord]) *tableDecoder {
	d := &tableDecoder{rc: rc, upsert: upsert, key: key, val: val, arena: types.NewArena(0)}
	d.w = types.NewRowWriter(rc.table.RowType(), d.arena)
	d.emitVal = func(v connector.TableRecord) {
		if d.upsert {
			if v.Kind.IsRetraction() {
				return
			}
			v.Kind = changelog.UpdateAfter
		}
		d.fill(v.Row, true)
		d.emitOut(connector.TableRecord{Kind: v.Kind, Row: d.w.Finish()})
	}
	return d
}

// fill sets the physical columns from the key (when the value does not
// hold them) and, if withValue, from the value row, then the metadata.
func (d *tableDecoder) fill(val types.Row, withValue bool) {
	rc := d.rc
	if d.hasKey {
		for j, c := range rc.keyCols {
			d.w.CopyField(c, d.keyRow, j)
		}
	}
	if withValue {
		for j, c := range rc.valCols {
			d.w.CopyField(c, val, j)
		}
	}
	n := rc.table.Schema.Len()
	for i, k := range rc.meta {
		switch k {
		case "topic":
			d.w.SetString(n+i, d.rec.Topic)
		case "partition":
			d.w.SetInt64(n+i, int64(d.rec.Partition))
		case "offset":
			d.w.SetInt64(n+i, d.rec.Offset)
		case "timestamp":
			d.w.SetTimestampMillis(n+i, d.rec.Timestamp.UnixMilli())
		}
	}
}

// decode emits the rows of one message.
func (d *tableDecoder) decode(rec *kgo.Record, emit func(connector.TableRecord)) error {
	d.rec, d.emitOut, d.hasKey = rec, emit, false
	if d.key != nil {
		if rec.Key == nil {
			if d.upsert {
				return errors.New("the message has no key; upsert-kafka messages are keyed by the primary key")
			}
		} else {
			d.keyErr = nil
			n := 0
			if err := d.key.Decode(rec.Key, func(v connector.TableRecord) {
				d.keyRow = d.arena.Copy(v.Row)
				n++
			}); err != nil {
				return fmt.Errorf("decoding the key: %w", err)
			}
			d.hasKey = n == 1
		}
	}
	if rec.Value == nil {
		if !d.upsert {
			return nil // a tombstone carries no row
		}
		d.fill(types.Row{}, false)
		emit(connector.TableRecord{Kind: changelog.Delete, Row: d.w.Finish()})
		return nil
	}
	if err := d.val.Decode(rec.Value, d.emitVal); err != nil {
		return fmt.Errorf("decoding the value: %w", err)
	}
	return nil
}

// tableEncoder encodes rows of a table into message keys and values.
type tableEncoder struct {
	rc       *rowCodec
	upsert   bool
	key, val connector.Encoder[connector.TableRecord]
	kw, vw   *types.RowWriter
	arena    *types.Arena
}

func newTableEncoder(rc *rowCodec, upsert bool, key, val connector.Encoder[connector.TableRecord]) *tableEncoder {
	e := &tableEncoder{rc: rc, upsert: upsert, key: key, val: val, arena: types.NewScratchArena()}
	if rc.keyTable != nil {
		e.kw = types.NewRowWriter(rc.keyTable.Schema, e.arena)
	}
	if len(rc.valCols) != rc.table.Schema.Len() {
		e.vw = types.NewRowWriter(rc.valTable.Schema, e.arena)
	}
	return e
}

// encode returns the key (nil without a key format) and value (nil for a
// tombstone) of a change; skip says the change writes nothing.
func (e *tableEncoder) encode(v connector.TableRecord) (key, val []byte, skip bool, err error) {
	if e.upsert && v.Kind == changelog.UpdateBefore {
		return nil, nil, true, nil
	}
	if e.key != nil {
		for j, c := range e.rc.keyCols {
			e.kw.CopyField(j, v.Row, c)
		}
		kr := e.kw.Finish()
		if key, err = e.key.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: kr}); err != nil {
			return nil, nil, false, fmt.Errorf("encoding the key: %w", err)
		}
		if key == nil {
			key = []byte{}
		}
	}
	if e.upsert && v.Kind == changelog.Delete {
		return key, nil, false, nil
	}
	row := v.Row
	if e.vw != nil {
		for j, c := range e.rc.valCols {
			e.vw.CopyField(j, v.Row, c)
		}
		row = e.vw.Finish()
	}
	kind := v.Kind
	if e.upsert {
		kind = changelog.Insert
	}
	if val, err = e.val.Encode(nil, connector.TableRecord{Kind: kind, Row: row}); err != nil {
		return nil, nil, false, fmt.Errorf("encoding the value: %w", err)
	}
	if val == nil {
		val = []byte{}
	}
	return key, val, false, nil
}

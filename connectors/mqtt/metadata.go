package mqtt

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// metadataKeys are the metadata columns the source offers, with the type
// kinds each may be declared as; the first kind is the one to suggest.
var metadataKeys = map[string][]types.Kind{
	"topic":           {types.KindVarChar, types.KindChar},
	"qos":             {types.KindInt, types.KindTinyInt, types.KindSmallInt, types.KindBigInt},
	"retained":        {types.KindBoolean},
	"duplicate":       {types.KindBoolean},
	"message-id":      {types.KindInt, types.KindBigInt},
	"timestamp":       {types.KindTimestampLTZ, types.KindTimestamp},
	"content-type":    {types.KindVarChar, types.KindChar},
	"user-properties": {types.KindMap},
}

var metadataOffered = []string{"topic", "qos", "retained", "duplicate", "message-id", "timestamp", "content-type", "user-properties"}

// mqtt5Metadata are the metadata of MQTT 5 properties.
var mqtt5Metadata = []string{"content-type", "user-properties"}

// messageDecoder turns a message into records.
type messageDecoder[T any] interface {
	decode(d *delivery, emit func(T)) error
}

// plainDecoder decodes the payload with a format's decoder.
type plainDecoder[T any] struct{ dec connector.Decoder[T] }

func (p plainDecoder[T]) decode(d *delivery, emit func(T)) error {
	return p.dec.Decode(d.payload, emit)
}

// newTableDecoding checks the table's metadata columns and returns what
// makes the decoders of its rows: the format's decoder of the physical
// columns, followed by the metadata.
func newTableDecoding(c *config, ctx connector.Context) (func() messageDecoder[connector.TableRecord], error) {
	t := ctx.Table
	for i, k := range t.Metadata {
		kinds, ok := metadataKeys[k]
		if !ok {
			return nil, connector.UnknownMetadata(spec.Name, k, metadataOffered...)
		}
		mt := t.MetadataTypes[i]
		if !slices.Contains(kinds, mt.Kind()) {
			want := kinds[0].String()
			if k == "user-properties" {
				want = "MAP<STRING, STRING>"
			}
			return nil, fmt.Errorf("%s: metadata column %q is %v; declare it as %s", c.label(), k, mt, want)
		}
		if k == "user-properties" && (!mt.Key().IsString() || !mt.Value().IsString()) {
			return nil, fmt.Errorf("%s: metadata column 'user-properties' is %v; declare it as MAP<STRING, STRING>", c.label(), mt)
		}
		if k == "timestamp" && mt.Precision() > 3 {
			return nil, fmt.Errorf("%s: metadata column 'timestamp' is %v; declare it as TIMESTAMP_LTZ(3): it is the time a message arrived, in milliseconds", c.label(), mt)
		}
		if c.version == v311 && slices.Contains(mqtt5Metadata, k) {
			return nil, fmt.Errorf("%s: metadata column %q is an MQTT 5 property; remove it or set 'mqtt.version' = '5'", c.label(), k)
		}
	}
	fctx := ctx
	if len(t.Metadata) > 0 {
		fctx.Table = &connector.Table{Name: t.Name, Schema: t.Schema, PrimaryKey: t.PrimaryKey, PartitionKeys: t.PartitionKeys}
	}
	newDec, err := connector.DecoderMaker[connector.TableRecord](fctx)
	if err != nil {
		return nil, err
	}
	return func() messageDecoder[connector.TableRecord] {
		d := newDec()
		if len(t.Metadata) == 0 {
			return plainDecoder[connector.TableRecord]{d}
		}
		return newMetaDecoder(t, d)
	}, nil
}

// metaDecoder decodes the physical columns with the format and appends
// the metadata columns.
type metaDecoder struct {
	t     *connector.Table
	dec   connector.Decoder[connector.TableRecord]
	w     *types.RowWriter
	props *types.MapWriter // of 'user-properties', if asked for
	arena *types.Arena
	cur   *delivery
	out   func(connector.TableRecord)
	emit  func(connector.TableRecord)
}

func newMetaDecoder(t *connector.Table, dec connector.Decoder[connector.TableRecord]) *metaDecoder {
	m := &metaDecoder{t: t, dec: dec, arena: types.NewArena(0)}
	m.w = types.NewRowWriter(t.RowType(), m.arena)
	for i, k := range t.Metadata {
		if k == "user-properties" {
			m.props = types.NewMapWriter(t.MetadataTypes[i])
		}
	}
	m.emit = func(v connector.TableRecord) {
		n := t.Schema.Len()
		for i := 0; i < n; i++ {
			m.w.CopyField(i, v.Row, i)
		}
		m.fill(n)
		m.out(connector.TableRecord{Kind: v.Kind, Row: m.w.Finish()})
	}
	return m
}

// fill sets the metadata columns, which start at column n.
func (m *metaDecoder) fill(n int) {
	d := m.cur
	for i, k := range m.t.Metadata {
		c := n + i
		switch k {
		case "topic":
			m.w.SetString(c, d.topic)
		case "qos":
			m.w.SetInt64(c, int64(d.qos))
		case "retained":
			m.w.SetBool(c, d.retained)
		case "duplicate":
			m.w.SetBool(c, d.dup)
		case "message-id":
			m.w.SetInt64(c, int64(d.id))
		case "timestamp":
			m.w.SetTimestampMillis(c, d.received)
		case "content-type":
			if d.contentType != "" {
				m.w.SetString(c, d.contentType)
			}
		case "user-properties":
			m.props.Reset()
			for _, kv := range d.user {
				m.props.Keys().AppendString(kv[0])
				m.props.Values().AppendString(kv[1])
			}
			m.w.SetMapFrom(c, m.props)
		}
	}
}

func (m *metaDecoder) decode(d *delivery, emit func(connector.TableRecord)) error {
	m.cur, m.out = d, emit
	return m.dec.Decode(d.payload, m.emit)
}

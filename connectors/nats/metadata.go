package nats

import (
	"fmt"
	"slices"

	natsgo "github.com/nats-io/nats.go"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// metadataKeys are the metadata columns the source offers, with the type
// kinds each may be declared as; the first kind is the one to suggest.
var metadataKeys = map[string][]types.Kind{
	"subject":         {types.KindVarChar, types.KindChar},
	"stream-sequence": {types.KindBigInt},
	"timestamp":       {types.KindTimestampLTZ, types.KindTimestamp},
	"headers":         {types.KindMap},
}

var metadataOffered = []string{"subject", "stream-sequence", "timestamp", "headers"}

// message is what the source knows of a message it decodes.
type message struct {
	subject string
	seq     uint64 // the stream sequence; 0 for core NATS
	ts      int64  // JetStream: when the stream stored it; core NATS: when it arrived (ms)
	header  natsgo.Header
	data    []byte
}

// messageDecoder turns a message into records.
type messageDecoder[T any] interface {
	decode(m *message, emit func(T)) error
}

// plainDecoder decodes the data with a format's decoder.
type plainDecoder[T any] struct{ dec connector.Decoder[T] }

func (p plainDecoder[T]) decode(m *message, emit func(T)) error {
	return p.dec.Decode(m.data, emit)
}

// checkMetadata checks the table's metadata columns against what the
// source offers.
func (c *config) checkMetadata(t *connector.Table) error {
	for i, k := range t.Metadata {
		kinds, ok := metadataKeys[k]
		if !ok {
			return connector.UnknownMetadata(spec.Name, k, metadataOffered...)
		}
		mt := t.MetadataTypes[i]
		want := kinds[0].String()
		if k == "headers" {
			want = "MAP<STRING, STRING>"
		}
		if !slices.Contains(kinds, mt.Kind()) {
			return fmt.Errorf("nats %q: metadata column %q is %v; declare it as %s", c.name, k, mt, want)
		}
		switch k {
		case "headers":
			if !mt.Key().IsString() || !mt.Value().IsString() {
				return fmt.Errorf("nats %q: metadata column 'headers' is %v; declare it as MAP<STRING, STRING>", c.name, mt)
			}
		case "timestamp":
			if mt.Precision() > 3 {
				return fmt.Errorf("nats %q: metadata column 'timestamp' is %v; declare it as TIMESTAMP_LTZ(3): NATS times are read in milliseconds", c.name, mt)
			}
		case "stream-sequence":
			if c.stream == "" {
				return fmt.Errorf("nats %q: metadata column 'stream-sequence' needs a JetStream 'stream': core NATS messages have no sequence; set 'stream' or remove the column", c.name)
			}
		}
	}
	return nil
}

// newTableDecoding checks the table's metadata columns and returns what
// makes the decoders of its rows: the format's decoder of the physical
// columns, followed by the metadata.
func (c *config) newTableDecoding(ctx connector.Context) (func() messageDecoder[connector.TableRecord], error) {
	t := ctx.Table
	if err := c.checkMetadata(t); err != nil {
		return nil, err
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
	t       *connector.Table
	dec     connector.Decoder[connector.TableRecord]
	w       *types.RowWriter
	headers *types.MapWriter // of 'headers', if asked for
	names   []string         // scratch: the header names, sorted
	cur     *message
	out     func(connector.TableRecord)
	emit    func(connector.TableRecord)
}

func newMetaDecoder(t *connector.Table, dec connector.Decoder[connector.TableRecord]) *metaDecoder {
	m := &metaDecoder{t: t, dec: dec}
	m.w = types.NewRowWriter(t.RowType(), types.NewArena(0))
	for i, k := range t.Metadata {
		if k == "headers" {
			m.headers = types.NewMapWriter(t.MetadataTypes[i])
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
	msg := m.cur
	for i, k := range m.t.Metadata {
		c := n + i
		switch k {
		case "subject":
			m.w.SetString(c, msg.subject)
		case "stream-sequence":
			m.w.SetInt64(c, int64(msg.seq))
		case "timestamp":
			m.w.SetTimestampMillis(c, msg.ts)
		case "headers":
			m.headers.Reset()
			m.names = m.names[:0]
			for h, vs := range msg.header {
				if len(vs) > 0 {
					m.names = append(m.names, h)
				}
			}
			slices.Sort(m.names)
			for _, h := range m.names {
				m.headers.Keys().AppendString(h)
				m.headers.Values().AppendString(msg.header[h][0])
			}
			m.w.SetMapFrom(c, m.headers)
		}
	}
}

func (m *metaDecoder) decode(msg *message, emit func(connector.TableRecord)) error {
	m.cur, m.out = msg, emit
	return m.dec.Decode(msg.data, m.emit)
}

// location says where a message was, for errors and dead letters.
func (c *config) location(m *message) string {
	if c.stream == "" {
		return "subject " + m.subject
	}
	return fmt.Sprintf("stream %s sequence %d (subject %s)", c.stream, m.seq, m.subject)
}

package rabbitmq

import (
	"fmt"
	"slices"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// metadataKeys are the metadata columns the source offers, with the type
// kinds each may be declared as; the first kind is the one to suggest.
var metadataKeys = map[string][]types.Kind{
	"routing-key": {types.KindVarChar, types.KindChar},
}

var metadataOffered = []string{"routing-key"}

// deliveryDecoder is a decoder that takes the metadata of each message
// before decoding its body.
type deliveryDecoder interface {
	setRoutingKey(key string)
}

// newTableDecoding checks the table's metadata columns and returns what
// makes the decoders of its rows: the format's decoder of the physical
// columns, followed by the metadata.
func newTableDecoding(c *config, ctx connector.Context) (func() connector.Decoder[connector.TableRecord], error) {
	t := ctx.Table
	for i, k := range t.Metadata {
		kinds, ok := metadataKeys[k]
		if !ok {
			return nil, connector.UnknownMetadata(spec.Name, k, metadataOffered...)
		}
		if mt := t.MetadataTypes[i]; !slices.Contains(kinds, mt.Kind()) {
			return nil, fmt.Errorf("rabbitmq %q: metadata column %q is %v; declare it as %s", c.name, k, mt, kinds[0])
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
	if len(t.Metadata) == 0 {
		return newDec, nil
	}
	return func() connector.Decoder[connector.TableRecord] { return newMetaDecoder(t, newDec()) }, nil
}

// metaDecoder decodes the physical columns with the format and appends
// the metadata columns of the message set before (setRoutingKey).
type metaDecoder struct {
	t     *connector.Table
	dec   connector.Decoder[connector.TableRecord]
	w     *types.RowWriter
	arena *types.Arena
	key   string // the routing key of the message being decoded
	out   func(connector.TableRecord)
	emit  func(connector.TableRecord)
}

func newMetaDecoder(t *connector.Table, dec connector.Decoder[connector.TableRecord]) *metaDecoder {
	m := &metaDecoder{t: t, dec: dec, arena: types.NewArena(0)}
	m.w = types.NewRowWriter(t.RowType(), m.arena)
	m.emit = func(v connector.TableRecord) {
		n := t.Schema.Len()
		for i := 0; i < n; i++ {
			m.w.CopyField(i, v.Row, i)
		}
		for i, k := range t.Metadata {
			switch k {
			case "routing-key":
				m.w.SetString(n+i, m.key)
			}
		}
		m.out(connector.TableRecord{Kind: v.Kind, Row: m.w.Finish()})
	}
	return m
}

func (m *metaDecoder) setRoutingKey(key string) { m.key = key }

// Decode decodes the body of the message set before.
func (m *metaDecoder) Decode(b []byte, emit func(connector.TableRecord)) error {
	m.out = emit
	return m.dec.Decode(b, m.emit)
}

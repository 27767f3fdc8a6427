package rabbitmq

import (
	"fmt"
	"slices"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// metadataKeys are the metadata columns the source offers, with the type
// kinds each may be declared as; the first kind is the one to suggest.
var metadataKeys = map[string][]types.Kind{
	"routing-key": {types.KindVarChar, types.KindChar},
}

// headerPrefix starts the metadata keys of message headers: the column
// 'header.region' holds the value of the header "region".
const headerPrefix = "header."

// headerKinds are the types a header's column may be declared as: STRING
// (VARCHAR) for a string header, BIGINT for an integer one, BOOLEAN for a
// boolean one.
var headerKinds = []types.Kind{types.KindVarChar, types.KindBigInt, types.KindBoolean}

var metadataOffered = []string{"routing-key", headerPrefix + "<name>"}

// headerName returns the header a metadata key names, if it names one.
func headerName(key string) (string, bool) {
	name, ok := strings.CutPrefix(key, headerPrefix)
	return name, ok && name != ""
}

// stringHeader returns the value of a string header (AMQP long string or
// byte array), and false for a header of another type or none.
func stringHeader(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	}
	return "", false
}

// intHeader returns the value of an integer header, and false for a
// header of another type or none.
func intHeader(v any) (int64, bool) {
	switch v := v.(type) {
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case int:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	}
	return 0, false
}

// deliveryDecoder is a decoder that takes the metadata of each message
// before decoding its body.
type deliveryDecoder interface {
	setDelivery(routingKey string, headers amqp.Table)
}

// newTableDecoding checks the table's metadata columns and returns what
// makes the decoders of its rows: the format's decoder of the physical
// columns, followed by the metadata.
func newTableDecoding(c *config, ctx connector.Context) (func() connector.Decoder[connector.TableRecord], error) {
	t := ctx.Table
	for i, k := range t.Metadata {
		mt := t.MetadataTypes[i]
		if name, ok := headerName(k); ok {
			if !slices.Contains(headerKinds, mt.Kind()) {
				return nil, fmt.Errorf("rabbitmq %q: metadata column %q (header %q) is %v; declare it as STRING for a string header, BIGINT for an integer one or BOOLEAN for a boolean one", c.name, k, name, mt)
			}
			continue
		}
		kinds, ok := metadataKeys[k]
		if !ok {
			return nil, connector.UnknownMetadata(spec.Name, k, metadataOffered...)
		}
		if !slices.Contains(kinds, mt.Kind()) {
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
// the metadata columns of the message set before (setDelivery).
type metaDecoder struct {
	t       *connector.Table
	dec     connector.Decoder[connector.TableRecord]
	w       *types.RowWriter
	arena   *types.Arena
	key     string     // the routing key of the message being decoded
	headers amqp.Table // its headers
	// meta sets the metadata columns of the message being decoded.
	meta []func()
	out  func(connector.TableRecord)
	emit func(connector.TableRecord)
}

func newMetaDecoder(t *connector.Table, dec connector.Decoder[connector.TableRecord]) *metaDecoder {
	m := &metaDecoder{t: t, dec: dec, arena: types.NewArena(0)}
	m.w = types.NewRowWriter(t.RowType(), m.arena)
	n := t.Schema.Len()
	for i, k := range t.Metadata {
		col := n + i
		if k == "routing-key" {
			m.meta = append(m.meta, func() { m.w.SetString(col, m.key) })
			continue
		}
		name, _ := headerName(k)
		switch t.MetadataTypes[i].Kind() {
		case types.KindBigInt:
			m.meta = append(m.meta, func() {
				if v, ok := intHeader(m.headers[name]); ok {
					m.w.SetInt64(col, v)
				}
			})
		case types.KindBoolean:
			m.meta = append(m.meta, func() {
				if v, ok := m.headers[name].(bool); ok {
					m.w.SetBool(col, v)
				}
			})
		default:
			m.meta = append(m.meta, func() {
				if v, ok := stringHeader(m.headers[name]); ok {
					m.w.SetString(col, v)
				}
			})
		}
	}
	m.emit = func(v connector.TableRecord) {
		for i := 0; i < n; i++ {
			m.w.CopyField(i, v.Row, i)
		}
		for _, set := range m.meta {
			set()
		}
		m.out(connector.TableRecord{Kind: v.Kind, Row: m.w.Finish()})
	}
	return m
}

func (m *metaDecoder) setDelivery(key string, headers amqp.Table) { m.key, m.headers = key, headers }

// Decode decodes the body of the message set before.
func (m *metaDecoder) Decode(b []byte, emit func(connector.TableRecord)) error {
	m.out = emit
	return m.dec.Decode(b, m.emit)
}

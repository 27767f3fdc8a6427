package redis

import (
	"fmt"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// entryMeta describes the entry a reader decodes, for the metadata
// columns.
type entryMeta struct {
	stream string
	id     string
	ms     int64
}

// metadataKeys are the metadata columns the source offers, with the type
// kinds each may be declared as.
var metadataKeys = map[string][]types.Kind{
	"stream":    {types.KindVarChar, types.KindChar},
	"entry-id":  {types.KindVarChar, types.KindChar},
	"timestamp": {types.KindTimestampLTZ, types.KindTimestamp},
}

var metadataOffered = []string{"stream", "entry-id", "timestamp"}

// tableDecoderOf checks the metadata columns of the table of ctx and
// returns a maker of decoders of its rows: the format decodes the physical
// columns, and the metadata columns are appended from the entry.
func tableDecoderOf(c *config, ctx connector.Context) (func(*entryMeta) connector.Decoder[connector.TableRecord], error) {
	t := ctx.Table
	for i, k := range t.Metadata {
		kinds, ok := metadataKeys[k]
		if !ok {
			return nil, connector.UnknownMetadata(spec.Name, k, metadataOffered...)
		}
		kind := t.MetadataTypes[i].Kind()
		found := false
		for _, want := range kinds {
			found = found || want == kind
		}
		if !found {
			return nil, fmt.Errorf("redis %q: metadata column %q is %v; declare it as %v", c.name, k, t.MetadataTypes[i], kinds[0])
		}
		if k == "timestamp" && t.MetadataTypes[i].Precision() > 3 {
			return nil, fmt.Errorf("redis %q: metadata column 'timestamp' is %v; declare it as TIMESTAMP_LTZ(3): entry ids hold milliseconds", c.name, t.MetadataTypes[i])
		}
	}
	physical := ctx
	if len(t.Metadata) > 0 {
		pt := *t
		pt.Metadata, pt.MetadataTypes = nil, nil
		physical.Table = &pt
	}
	newDec, err := connector.DecoderMaker[connector.TableRecord](physical)
	if err != nil {
		return nil, err
	}
	return func(meta *entryMeta) connector.Decoder[connector.TableRecord] {
		d := newDec()
		if len(t.Metadata) == 0 {
			return d
		}
		return newMetaDecoder(d, t, meta)
	}, nil
}

// metaDecoder appends the metadata columns to the rows of a format's
// decoder.
type metaDecoder struct {
	inner connector.Decoder[connector.TableRecord]
	keys  []string
	n     int // physical columns
	w     *types.RowWriter
	meta  *entryMeta
	emit  func(connector.TableRecord)
	wrap  func(connector.TableRecord)
}

func newMetaDecoder(inner connector.Decoder[connector.TableRecord], t *connector.Table, meta *entryMeta) *metaDecoder {
	d := &metaDecoder{inner: inner, keys: t.Metadata, n: t.Schema.Len(), meta: meta,
		w: types.NewRowWriter(t.RowType(), types.NewArena(0))}
	d.wrap = func(v connector.TableRecord) {
		for i := 0; i < d.n; i++ {
			d.w.CopyField(i, v.Row, i)
		}
		for i, k := range d.keys {
			switch k {
			case "stream":
				d.w.SetString(d.n+i, d.meta.stream)
			case "entry-id":
				d.w.SetString(d.n+i, d.meta.id)
			case "timestamp":
				d.w.SetTimestampMillis(d.n+i, d.meta.ms)
			}
		}
		d.emit(connector.TableRecord{Kind: v.Kind, Row: d.w.Finish()})
	}
	return d
}

// Decode decodes data with the format and emits its rows with the
// metadata of the entry.
func (d *metaDecoder) Decode(data []byte, emit func(connector.TableRecord)) error {
	d.emit = emit
	return d.inner.Decode(data, d.wrap)
}

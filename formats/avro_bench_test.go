package formats_test

import (
	"testing"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// BenchmarkAvro writes and reads a row of eight columns in the avro format.
func BenchmarkAvro(b *testing.B) {
	table := avroTable(b, "ROW<id BIGINT NOT NULL, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), qty INT, ok BOOLEAN, tags ARRAY<STRING>, attrs MAP<STRING, STRING>>")
	row := avroRow(b, table.Schema, `{"id": 123456, "name": "a product name", "price": 1234.56, "ts": "2024-05-06 07:08:09.123", "qty": 42, "ok": true, "tags": ["x", "y"], "attrs": {"color": "red"}}`)
	enc, err := connector.OpenTableEncoder(connector.Default, "avro", nil, table)
	if err != nil {
		b.Fatal(err)
	}
	dec, err := connector.OpenTableDecoder(connector.Default, "avro", nil, table)
	if err != nil {
		b.Fatal(err)
	}
	rec := connector.TableRecord{Kind: changelog.Insert, Row: row}
	msg, err := enc.Encode(nil, rec)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		buf := make([]byte, 0, 256)
		for b.Loop() {
			if _, err := enc.Encode(buf[:0], rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		n := 0
		for b.Loop() {
			if err := dec.Decode(msg, func(connector.TableRecord) { n++ }); err != nil {
				b.Fatal(err)
			}
		}
		if n == 0 {
			b.Fatal("nothing decoded")
		}
	})
}

package formats_test

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/formats"
	"github.com/eddystream/eddy/sql/types"
)

// The tests of avro-confluent use srfake, franz-go's in-process fake of a
// Confluent schema registry, as the kafka tests use kfake.

func avroTable(t testing.TB, schema string) *connector.Table {
	t.Helper()
	typ, err := types.ParseType(schema)
	if err != nil {
		t.Fatal(err)
	}
	return &connector.Table{Schema: typ.Row()}
}

func avroRow(t testing.TB, rt *types.RowType, js string) types.Row {
	t.Helper()
	jd, err := types.NewJSONDecoder(rt, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := jd.Decode([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// avroDecodeAll decodes data and returns the changes printed, or the error.
func avroDecodeAll(dec connector.Decoder[connector.TableRecord], rt *types.RowType, data []byte) (string, error) {
	var got []string
	err := dec.Decode(data, func(c connector.TableRecord) { got = append(got, types.FormatChange(c.Kind, rt, c.Row)) })
	return strings.Join(got, " "), err
}

func TestAvroConfluentRoundTrip(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	table := avroTable(t, "ROW<id INT NOT NULL, name STRING, price DECIMAL(10, 2), tags ARRAY<STRING>, addr ROW<city STRING>>")
	rt := table.Schema
	enc, err := connector.OpenTableEncoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL(), "subject": "items-value"}, table)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := connector.OpenTableDecoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL()}, table)
	if err != nil {
		t.Fatal(err)
	}
	rows := []string{
		`{"id": 1, "name": "Ann", "price": 12.5, "tags": ["a", null], "addr": {"city": "Lyon"}}`,
		`{"id": 2}`,
	}
	for _, js := range rows {
		row := avroRow(t, rt, js)
		b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
		if err != nil {
			t.Fatal(err)
		}
		ss, ok := reg.GetSchema("items-value", 1)
		if !ok {
			t.Fatal("the writer registered no schema under subject items-value")
		}
		want, err := formats.AvroSchemaOf(rt)
		if err != nil {
			t.Fatal(err)
		}
		if ss.Schema.Schema != want {
			t.Fatalf("registered schema %s, want %s", ss.Schema.Schema, want)
		}
		if len(b) < 5 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != ss.ID {
			t.Fatalf("message %x is not magic byte 0 and schema id %d", b, ss.ID)
		}
		for range 20 {
			again, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
			if err != nil || string(again) != string(b) {
				t.Fatalf("the row was written to %x, then to %x (%v)", b, again, err)
			}
		}
		got, err := avroDecodeAll(dec, rt, b)
		if err != nil {
			t.Fatal(err)
		}
		if want := types.FormatChange(changelog.Insert, rt, row); got != want {
			t.Fatalf("decoded %s, want %s", got, want)
		}
	}
	if _, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Delete, Row: avroRow(t, rt, `{"id": 1}`)}); err == nil ||
		!strings.Contains(err.Error(), "insertions only") {
		t.Fatalf("encoding a deletion: %v, want an error saying the format holds insertions only", err)
	}
}

// TestAvroConfluentEvolution reads records written by another program with
// an older schema: its record has another name, a field the table does not
// have (skipped), and lacks a nullable column of the table (null).
func TestAvroConfluentEvolution(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	writer := `{"type":"record","name":"User","namespace":"com.acme","fields":[` +
		`{"name":"id","type":"int"},{"name":"legacy","type":"string"},{"name":"name","type":["null","string"],"default":null},` +
		`{"name":"addr","type":{"type":"record","name":"Address","fields":[{"name":"city","type":"string"}]}}]}`
	id, _, err := reg.RegisterSchema("users-value", sr.Schema{Schema: writer, Type: sr.TypeAvro})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := avro.Parse(writer)
	if err != nil {
		t.Fatal(err)
	}
	msg := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
	msg, err = ws.AppendEncode(msg, map[string]any{"id": int32(7), "legacy": "x", "name": "Bob", "addr": map[string]any{"city": "Oslo"}})
	if err != nil {
		t.Fatal(err)
	}

	table := avroTable(t, "ROW<id BIGINT NOT NULL, name STRING, email STRING, addr ROW<city STRING, zip INT>>")
	dec, err := connector.OpenTableDecoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL()}, table)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second time from the cached schema
		got, err := avroDecodeAll(dec, table.Schema, msg)
		if err != nil {
			t.Fatal(err)
		}
		if want := "+I[7, Bob, null, +I[Oslo, null]]"; got != want {
			t.Fatalf("decoded %s, want %s", got, want)
		}
	}

	strict := avroTable(t, "ROW<id INT NOT NULL, email STRING NOT NULL>")
	dec, err = connector.OpenTableDecoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL()}, strict)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := avroDecodeAll(dec, strict.Schema, msg); err == nil || !strings.Contains(err.Error(), "cannot be read as the table's columns") ||
		!strings.Contains(err.Error(), "email") {
		t.Fatalf("reading a record without the NOT NULL column email: %v, want an error naming it", err)
	}
}

func TestAvroConfluentMalformed(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	table := avroTable(t, "ROW<id INT NOT NULL>")
	dec, err := connector.OpenTableDecoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL()}, table)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		msg  []byte
		want string
	}{
		{[]byte{1, 0, 0, 0, 1, 2}, "starts with 0x01, not the magic byte 0"},
		{[]byte{0, 0, 0}, "not in Confluent's wire format"},
		{[]byte(`{"id":1}`), "not in Confluent's wire format"},
		{[]byte{0, 0, 0, 0, 42, 2}, "schema id 42 is unknown to the schema registry"},
	} {
		if _, err := avroDecodeAll(dec, table.Schema, c.msg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decoding %x: %v, want an error with %q", c.msg, err, c.want)
		}
	}

	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{}, "'avro-confluent.url' is required"},
		{map[string]string{"url": "registry:8081"}, "not an http:// or https:// URL"},
		{map[string]string{"url": reg.URL()}, "'avro-confluent.subject' is required to write"},
		{map[string]string{"url": reg.URL(), "subject": "s", "basic-auth.credentials-source": "USER_INFO"}, "'avro-confluent.basic-auth.user-info' is not set"},
		{map[string]string{"url": reg.URL(), "subject": "s", "basic-auth.credentials-source": "URL"}, "holds no user and password"},
		{map[string]string{"url": reg.URL(), "subject": "s", "basic-auth.user-info": "nopassword"}, "is not 'user:password'"},
		{map[string]string{"url": reg.URL(), "subject": "s", "basic-auth.user-info": "u:p", "bearer-auth.token": "t"}, "not both"},
	} {
		if _, err := connector.OpenTableEncoder(connector.Default, "avro-confluent", c.opts, table); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("an encoder with options %v: %v, want an error with %q", c.opts, err, c.want)
		}
	}
	if _, err := connector.OpenTableEncoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL(), "subject": "s"},
		avroTable(t, "ROW<m MAP<INT, STRING>>")); err == nil || !strings.Contains(err.Error(), "an Avro map has string keys") {
		t.Errorf("an encoder of MAP<INT, STRING>: %v, want an error saying Avro maps have string keys", err)
	}
}

func TestAvroConfluentBearerAuth(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Bearer s3cret"))
	defer reg.Close()
	table := avroTable(t, "ROW<id INT NOT NULL>")
	row := avroRow(t, table.Schema, `{"id": 5}`)
	enc, err := connector.OpenTableEncoder(connector.Default, "avro-confluent",
		map[string]string{"url": reg.URL(), "subject": "auth-value", "bearer-auth.credentials-source": "STATIC_TOKEN", "bearer-auth.token": "s3cret"}, table)
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
	if err != nil {
		t.Fatal(err)
	}
	dec, err := connector.OpenTableDecoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL(), "bearer-auth.token": "s3cret"}, table)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := avroDecodeAll(dec, table.Schema, b); err != nil || got != "+I[5]" {
		t.Fatalf("decoded %s, %v, want +I[5]", got, err)
	}
	bad, err := connector.OpenTableEncoder(connector.Default, "avro-confluent", map[string]string{"url": reg.URL(), "subject": "other-value"}, table)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row}); err == nil || !strings.Contains(err.Error(), "registering the table's schema under subject \"other-value\"") {
		t.Fatalf("registering without the token: %v, want an error naming the subject", err)
	}
}

func TestAvroConfluentBasicAuth(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("ann:pw"))))
	defer reg.Close()
	withUser := strings.Replace(reg.URL(), "http://", "http://ann:pw@", 1)
	for i, opts := range []map[string]string{
		{"url": reg.URL(), "subject": "basic-value", "basic-auth.credentials-source": "USER_INFO", "basic-auth.user-info": "ann:pw"},
		{"url": reg.URL(), "subject": "basic-value", "basic-auth.user-info": "ann:pw"},
		{"url": withUser, "subject": "basic-value", "basic-auth.credentials-source": "URL"},
	} {
		// A schema of its own each time, so that neither its id nor the
		// schema is in the caches and each way of authenticating is used.
		table := avroTable(t, fmt.Sprintf("ROW<id%d INT NOT NULL>", i))
		row := avroRow(t, table.Schema, fmt.Sprintf(`{"id%d": 6}`, i))
		enc, err := connector.OpenTableEncoder(connector.Default, "avro-confluent", opts, table)
		if err != nil {
			t.Fatal(err)
		}
		b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
		if err != nil {
			t.Fatalf("options %v: %v", opts, err)
		}
		delete(opts, "subject")
		dec, err := connector.OpenTableDecoder(connector.Default, "avro-confluent", opts, table)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := avroDecodeAll(dec, table.Schema, b); err != nil || got != "+I[6]" {
			t.Fatalf("options %v: decoded %s, %v, want +I[6]", opts, got, err)
		}
	}
}

// TestAvroMapsRoundTrip writes maps and multisets of several entries, to
// the same bytes each time, and reads them back.
func TestAvroMapsRoundTrip(t *testing.T) {
	table := avroTable(t, "ROW<m MAP<STRING, DOUBLE>, ms MULTISET<STRING>, nested ARRAY<MAP<STRING, ROW<x INT>>>>")
	rt := table.Schema
	enc, err := connector.OpenTableEncoder(connector.Default, "avro", nil, table)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := connector.OpenTableDecoder(connector.Default, "avro", nil, table)
	if err != nil {
		t.Fatal(err)
	}
	row := avroRow(t, rt, `{"m": {"x": 1.5, "y": null, "z": -2}, "ms": {"a": 2, "b": 1, "c": 7}, "nested": [{"p": {"x": 1}, "q": null, "r": {"x": null}}]}`)
	b, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
		if err != nil || string(again) != string(b) {
			t.Fatalf("the row was written to %x, then to %x (%v)", b, again, err)
		}
	}
	for range 20 {
		again, err := enc.Encode(nil, connector.TableRecord{Kind: changelog.Insert, Row: row})
		if err != nil || string(again) != string(b) {
			t.Fatalf("the row was written to %x, then to %x (%v)", b, again, err)
		}
	}
	got, err := avroDecodeAll(dec, rt, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I[{x=1.5, y=null, z=-2.0}, {a=2, b=1, c=7}, [{p=+I[1], q=null, r=+I[null]}]]"; got != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}
}

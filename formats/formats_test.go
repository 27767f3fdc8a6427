package formats_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	"github.com/eddystream/eddy/formats"
)

type user struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	Skip  string `json:"-"`
}

func decodeAll[T any](t *testing.T, d connector.Decoder[T], data string) ([]T, error) {
	t.Helper()
	var out []T
	err := d.Decode([]byte(data), func(v T) { out = append(out, v) })
	return out, err
}

func TestJSONTyped(t *testing.T) {
	got, err := decodeAll(t, formats.JSON[user](), `{"id": 7, "name": "Ann", "extra": true}`)
	if err != nil || !reflect.DeepEqual(got, []user{{ID: 7, Name: "Ann"}}) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, bad := range []string{`{"id": "seven"}`, `{"id": 7`, `[1, 2]`, ``} {
		if _, err := decodeAll(t, formats.JSON[user](), bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
	e := formats.JSONEncoder[user]()
	b, err := e.Encode([]byte("x"), user{ID: 1, Name: "<b>&", Skip: "no"})
	if err != nil || string(b) != `x{"id":1,"name":"<b>&"}` {
		t.Fatalf("encoded %q, %v; want no line ending and no HTML escapes", b, err)
	}
	if _, err := formats.JSONEncoder[func()]().Encode(nil, func() {}); err == nil || !strings.Contains(err.Error(), "json: encoding a func()") {
		t.Errorf("encoding a func: %v", err)
	}
}

type base struct {
	Region string `json:"region"`
}

type event struct {
	base
	Kind  string
	Count int `json:"count"`
}

func TestJSONThroughTheRegistry(t *testing.T) {
	d, err := connector.OpenDecoder[user](connector.Default, "json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := decodeAll(t, d, `{"id": 1}`); err != nil || !reflect.DeepEqual(got, []user{{ID: 1}}) {
		t.Errorf("lenient: %v, %v", got, err)
	}
	strict, err := connector.OpenDecoder[event](connector.Default, "json", map[string]string{"fail-on-missing-field": "true"})
	if err != nil {
		t.Fatal(err)
	}
	// Names match without regard to case, and embedded fields are flattened,
	// as encoding/json does.
	if got, err := decodeAll(t, strict, `{"REGION": "eu", "kind": "click", "count": 2}`); err != nil || !reflect.DeepEqual(got, []event{{base{"eu"}, "click", 2}}) {
		t.Errorf("strict: %v, %v", got, err)
	}
	if _, err := decodeAll(t, strict, `{"region": "eu", "Kind": "click"}`); err == nil || !strings.Contains(err.Error(), `field "count" is missing`) {
		t.Errorf("a missing field: %v", err)
	}
	if _, err := decodeAll(t, strict, `not json`); err == nil {
		t.Error("bad JSON decoded")
	}
	if _, err := connector.OpenDecoder[int](connector.Default, "json", map[string]string{"fail-on-missing-field": "true"}); err == nil || !strings.Contains(err.Error(), "needs a struct record type") {
		t.Errorf("strict decoding of ints: %v", err)
	}
	e, err := connector.OpenEncoder[user](connector.Default, "json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := e.Encode(nil, user{ID: 2, Name: "Bo"}); err != nil || string(b) != `{"id":2,"name":"Bo"}` {
		t.Errorf("encoded %q, %v", b, err)
	}
}

func TestCSVTyped(t *testing.T) {
	parse := func(f []string) (user, error) { return user{Name: f[0], Email: f[1]}, nil }
	d := formats.CSV(parse, formats.CSVOptions{FieldDelimiter: ';', AllowComments: true})
	got, err := decodeAll(t, d, `"Doe; Jane";jane@x.org`)
	if err != nil || !reflect.DeepEqual(got, []user{{Name: "Doe; Jane", Email: "jane@x.org"}}) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	if got, err := decodeAll(t, d, "  # a comment"); err != nil || len(got) != 0 {
		t.Errorf("a comment decoded to %v, %v", got, err)
	}
	if _, err := decodeAll(t, d, `"unterminated;x`); err == nil {
		t.Error("a bad quote decoded")
	}
	if _, err := decodeAll(t, formats.CSV(parse, formats.CSVOptions{}), "# not a comment here,x"); err != nil {
		t.Errorf("without AllowComments a # line is a record: %v", err)
	}
	e := formats.CSVEncoder(func(u user) ([]string, error) { return []string{u.Name, u.Email}, nil }, formats.CSVOptions{})
	if b, err := e.Encode(nil, user{Name: `say "hi", Bo`, Email: "b@x"}); err != nil || string(b) != `"say ""hi"", Bo",b@x` {
		t.Errorf("encoded %q, %v", b, err)
	}
	if _, err := e.Encode(nil, user{Name: "two\nlines"}); err == nil || !strings.Contains(err.Error(), "field 1 holds a line break") {
		t.Errorf("a line break in a field: %v", err)
	}
}

type row struct {
	Name   string
	Age    int8
	Score  float64
	Member bool
	Joined time.Time
	Count  uint16
	hidden int
}

func TestCSVThroughTheRegistry(t *testing.T) {
	d, err := connector.OpenDecoder[row](connector.Default, "csv", map[string]string{"field-delimiter": "|", "allow-comments": "true"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeAll(t, d, "Ann|42|9.5|true|2024-01-02T03:04:05Z|7")
	want := row{Name: "Ann", Age: 42, Score: 9.5, Member: true, Joined: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Count: 7}
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	if got, err := decodeAll(t, d, "# header comment"); err != nil || len(got) != 0 {
		t.Errorf("a comment: %v, %v", got, err)
	}
	for bad, msg := range map[string]string{
		"Ann|420|9.5|true|2024-01-02T03:04:05Z|7": "field 2 (Age)",
		"Ann|42|x|true|2024-01-02T03:04:05Z|7":    "field 3 (Score)",
		"Ann|42|9.5|yes|2024-01-02T03:04:05Z|7":   "field 4 (Member)",
		"Ann|42|9.5|true|yesterday|7":             "field 5 (Joined)",
		"Ann|42|9.5|true|2024-01-02T03:04:05Z|-1": "field 6 (Count)",
		"Ann|42": "2 fields, but formats_test.row has 6",
	} {
		if _, err := decodeAll(t, d, bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v; want an error about %s", bad, err, msg)
		}
	}
	e, err := connector.OpenEncoder[row](connector.Default, "csv", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Encode(nil, want)
	if err != nil || string(b) != "Ann,42,9.5,true,2024-01-02T03:04:05Z,7" {
		t.Errorf("encoded %q, %v", b, err)
	}
	type nested struct{ Inner []int }
	if _, err := connector.OpenDecoder[nested](connector.Default, "csv", nil); err == nil || !strings.Contains(err.Error(), "field Inner of formats_test.nested has type []int") {
		t.Errorf("a slice field: %v", err)
	}
	if _, err := connector.OpenEncoder[int](connector.Default, "csv", nil); err == nil || !strings.Contains(err.Error(), "records must be structs") {
		t.Errorf("ints: %v", err)
	}
	for _, delim := range []string{";;", `"`, ""} {
		_, err := connector.OpenDecoder[row](connector.Default, "csv", map[string]string{"field-delimiter": delim})
		if delim == "" {
			// An empty value is not a delimiter either.
			if err == nil {
				t.Errorf("field-delimiter %q accepted", delim)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "'field-delimiter'") {
			t.Errorf("field-delimiter %q: %v", delim, err)
		}
	}
}

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[row](t, connectortest.OptionsCase{Name: "csv", Format: true})
	connectortest.RunOptions[user](t, connectortest.OptionsCase{Name: "json", Format: true})
	connectortest.RunOptions[string](t, connectortest.OptionsCase{Name: "raw", Format: true})
}

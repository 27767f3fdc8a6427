package codec

import (
	"reflect"
	"testing"
)

func TestJSONCodec(t *testing.T) {
	type rec struct {
		A int
		B map[string]any
	}
	c := JSON[rec]()
	v := rec{1, map[string]any{"x": "y", "n": 2.5}}
	if got := roundTrip(t, c, v); !reflect.DeepEqual(got, v) {
		t.Errorf("round trip gave %#v", got)
	}
	if _, _, err := c.Decode([]byte{5, '{'}); err == nil {
		t.Error("truncated input decoded")
	}
	if _, _, err := c.Decode([]byte{1, '['}); err == nil {
		t.Error("bad JSON decoded")
	}
	defer func() {
		if recover() == nil {
			t.Error("encoding a channel did not panic")
		}
	}()
	JSON[chan int]().Append(nil, make(chan int))
}

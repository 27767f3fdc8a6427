package connector

import (
	"reflect"
	"strings"
	"testing"
)

// countingFormat makes codecs that number what they decode and encode,
// from the option 'start', so that codecs sharing state would show it.
type countingFormat struct{}

func (countingFormat) Spec() Spec {
	return Spec{Name: "counting", Kind: FormatKind, Description: "Numbered messages.",
		Options: []Option{{Key: "start", Type: Int, Default: "0", Description: "The first number."}}}
}

type countingCodec struct{ n int64 }

func (c *countingCodec) Decode(_ []byte, emit func(int64)) error { c.n++; emit(c.n); return nil }
func (c *countingCodec) Encode(dst []byte, _ int64) ([]byte, error) {
	c.n++
	return append(dst, byte('0'+c.n)), nil
}

func (countingFormat) NewDecoder(ctx Context) (any, error) {
	return Decoder[int64](&countingCodec{n: ctx.Options.Int("start")}), nil
}

func (countingFormat) NewEncoder(ctx Context) (any, error) {
	return Encoder[int64](&countingCodec{n: ctx.Options.Int("start")}), nil
}

// codecContext returns the context of a connector using the counting
// format with options.
func codecContext(t *testing.T, options map[string]string) Context {
	t.Helper()
	r := NewRegistry()
	r.Register(countingFormat{})
	s := Spec{Name: "numbers", Kind: SourceKind | SinkKind, Formats: []string{"counting"}}
	o, err := s.Validate(options)
	if err != nil {
		t.Fatal(err)
	}
	return Context{Name: "numbers", Options: o, RecordType: reflect.TypeFor[int64](), Registry: r}
}

func TestCodecMakersReturnTheFormatsError(t *testing.T) {
	ctx := codecContext(t, map[string]string{"format": "counting", "counting.start": "one"})
	_, want := DecoderFor[int64](ctx)
	if want == nil || !strings.Contains(want.Error(), "'start' = 'one'") {
		t.Fatalf("DecoderFor accepted 'counting.start' = 'one': %v", want)
	}
	if mk, err := DecoderMaker[int64](ctx); mk != nil || err == nil || err.Error() != want.Error() {
		t.Errorf("DecoderMaker = %v, %v; want nil, %v", mk != nil, err, want)
	}
	if mk, err := EncoderMaker[int64](ctx); mk != nil || err == nil || err.Error() != want.Error() {
		t.Errorf("EncoderMaker = %v, %v; want nil, %v", mk != nil, err, want)
	}
}

func TestCodecMakersMakeIndependentCodecs(t *testing.T) {
	ctx := codecContext(t, map[string]string{"format": "counting", "counting.start": "1"})
	newDecoder, err := DecoderMaker[int64](ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newDecoder(), newDecoder()
	var got []int64
	for _, d := range []Decoder[int64]{a, a, b} {
		if err := d.Decode(nil, func(v int64) { got = append(got, v) }); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(got, []int64{2, 3, 2}) {
		t.Errorf("two decoders decoded %v; want [2 3 2] (a decoder of its own for each, from 'start')", got)
	}
	newEncoder, err := EncoderMaker[int64](ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, f := newEncoder(), newEncoder()
	var out []byte
	for _, enc := range []Encoder[int64]{e, e, f} {
		if out, err = enc.Encode(out, 0); err != nil {
			t.Fatal(err)
		}
	}
	if string(out) != "232" {
		t.Errorf("two encoders encoded %q; want \"232\"", out)
	}
}

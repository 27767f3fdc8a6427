package sketch

import (
	"encoding"
	"errors"
	"strings"
	"testing"
)

// checkDecodeErrors runs the decoder checks every synopsis shares on a valid
// encoding blob: truncated input, an unknown version, a foreign type tag and
// trailing bytes must all fail with the matching sentinel error and a
// message prefixed "sketch:".
func checkDecodeErrors(t *testing.T, blob []byte, fresh func() encoding.BinaryUnmarshaler) {
	t.Helper()
	if err := fresh().UnmarshalBinary(blob); err != nil {
		t.Fatalf("valid encoding rejected: %v", err)
	}
	expect := func(what string, data []byte, sentinels ...error) {
		t.Helper()
		err := fresh().UnmarshalBinary(data)
		if err == nil {
			t.Fatalf("%s: decoded without error", what)
		}
		if !strings.HasPrefix(err.Error(), "sketch: ") {
			t.Fatalf("%s: error %q lacks the sketch: prefix", what, err)
		}
		for _, s := range sentinels {
			if errors.Is(err, s) {
				return
			}
		}
		t.Fatalf("%s: error %q wraps none of %v", what, err, sentinels)
	}
	// Truncation at every short length and at evenly spaced longer ones.
	step := max(1, len(blob)/64)
	for n := 0; n < len(blob); n++ {
		if n > 64 && n%step != 0 && n != len(blob)-1 {
			continue
		}
		expect("truncated", blob[:n], ErrTruncated, ErrCorrupt)
	}
	bad := append([]byte(nil), blob...)
	bad[0] = 99
	expect("version 99", bad, ErrVersion)
	if err := fresh().UnmarshalBinary(bad); !strings.Contains(err.Error(), "unsupported encoding version 99") {
		t.Fatalf("version error %q does not name the version", err)
	}
	bad[0], bad[1] = blob[0], '?'
	expect("foreign tag", bad, ErrCorrupt)
	expect("trailing byte", append(append([]byte(nil), blob...), 0), ErrCorrupt)
}

func TestDecoderVarints(t *testing.T) {
	e := newEncoder(1, 'x', 0)
	e.uvarint(1 << 63)
	e.varint(-5)
	e.f64s([]float64{1.5, -2})
	d := newDecoder(e.bytes(), "test", 1, 'x')
	if v := d.uvarint(); v != 1<<63 {
		t.Fatalf("uvarint = %d", v)
	}
	if v := d.varint(); v != -5 {
		t.Fatalf("varint = %d", v)
	}
	if v := d.f64s(); len(v) != 2 || v[0] != 1.5 || v[1] != -2 {
		t.Fatalf("f64s = %v", v)
	}
	if err := d.finish(); err != nil {
		t.Fatal(err)
	}
	// An overlong varint is corrupt, not truncated.
	d = newDecoder([]byte{1, 'x', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "test", 1, 'x')
	d.uvarint()
	if !errors.Is(d.finish(), ErrCorrupt) {
		t.Fatalf("overlong varint: %v", d.finish())
	}
	// A huge element count cannot allocate.
	d = newDecoder([]byte{1, 'x', 0xff, 0xff, 0xff, 0xff, 0x0f}, "test", 1, 'x')
	if d.count(8); !errors.Is(d.finish(), ErrTruncated) {
		t.Fatalf("huge count: %v", d.finish())
	}
}

package state

import (
	"testing"
	"time"

	"github.com/eddystream/eddy/internal/state/codec"
)

func TestTTLConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg TTLConfig
		ok  bool
	}{
		{TTLConfig{}, true},
		{TTLConfig{TTL: time.Millisecond}, true},
		{TTLConfig{TTL: time.Hour, Update: OnReadAndWrite, Visibility: ReturnExpiredIfNotCleanedUp}, true},
		{TTLConfig{TTL: -time.Second}, false},
		{TTLConfig{TTL: time.Microsecond}, false},
		{TTLConfig{TTL: time.Second, Update: 7}, false},
		{TTLConfig{TTL: time.Second, Visibility: 7}, false},
	} {
		if err := c.cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("Validate(%+v) = %v", c.cfg, err)
		}
	}
	if (TTLConfig{}).Enabled() || !(TTLConfig{TTL: time.Second}).Enabled() {
		t.Error("Enabled is wrong")
	}
}

func TestTTLStrings(t *testing.T) {
	if OnReadAndWrite.String() != "OnReadAndWrite" || ReturnExpiredIfNotCleanedUp.String() != "ReturnExpiredIfNotCleanedUp" ||
		TTLUpdate(9).String() != "TTLUpdate(9)" || NeverReturnExpired.String() != "NeverReturnExpired" {
		t.Error("TTL enum strings are wrong")
	}
}

func TestTTLExpiry(t *testing.T) {
	p, err := newTTLPolicy(TTLConfig{TTL: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p.expired(100, 109) || !p.expired(100, 110) {
		t.Error("an entry must expire exactly at stamp + TTL, as in Flink")
	}
	l := []Timed[int]{{1, 100}, {2, 95}, {3, 105}}
	if got := unexpired(l, p, 105); len(got) != 2 || got[0].Value != 1 || got[1].Value != 3 {
		t.Errorf("unexpired = %v", got)
	}
	if l[1].Value != 2 {
		t.Error("unexpired changed its input")
	}
}

func TestTimedCodec(t *testing.T) {
	tc := TimedCodec(mustCodec[string](t))
	v := Timed[string]{"x", -12345}
	enc := tc.Append([]byte("pre"), v)
	got, n, err := tc.Decode(append(enc[3:], "trailing"...))
	if err != nil || n != len(enc)-3 || got != v {
		t.Errorf("timed round trip of %v gave %v, %d of %d bytes, %v", v, got, n, len(enc)-3, err)
	}
	for i := range len(enc) - 3 {
		if _, _, err := tc.Decode(enc[3 : 3+i]); err == nil {
			t.Errorf("the first %d bytes of the encoding of %v decode", i, v)
		}
	}
}

// mustCodec returns the default codec of T or fails the test.
func mustCodec[T any](t testing.TB) codec.Codec[T] {
	t.Helper()
	c, err := codec.Default[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

package state

import (
	"testing"
	"time"
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

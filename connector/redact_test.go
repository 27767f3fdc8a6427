package connector_test

import (
	"testing"

	"github.com/eddystream/eddy/connector"
	_ "github.com/eddystream/eddy/connectors/all"
)

func TestRedact(t *testing.T) {
	got := connector.Default.Redact(map[string]string{
		"connector":                   "jdbc",
		"url":                         "jdbc:postgresql://db:5432/shop",
		"username":                    "eddy",
		"password":                    "hunter2",
		"properties.sasl.jaas.config": "x password=y",
		"other.url":                   "amqp://guest:guest@localhost:5672/",
		"empty.password":              "",
	})
	want := map[string]string{
		"connector": "jdbc", "url": "jdbc:postgresql://db:5432/shop", "username": "eddy", "password": "******",
		"properties.sasl.jaas.config": "******", "other.url": "amqp://guest:******@localhost:5672/", "empty.password": "",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d options, want %d", len(got), len(want))
	}
}

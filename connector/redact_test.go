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

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		"nats://u:p1@h1,nats://u:p2@h2":  "nats://u:******@h1,nats://u:******@h2",
		"amqp://user:pa/ss@host":         "amqp://user:******@host",
		"amqp://user:pa#ss@host":         "amqp://user:******@host",
		"amqp://user:p%zz@host":          "amqp://user:******@host",
		"jdbc:mysql://user:pw@host/db":   "jdbc:mysql://user:******@host/db",
		"redis://:secret@localhost:6379": "redis://:******@localhost:6379",
		"amqp://guest@localhost/":        "amqp://guest@localhost/",
		"mailto:someone@example.com":     "mailto:someone@example.com",
	} {
		got := connector.Default.Redact(map[string]string{"connector": "rabbitmq", "x.servers": in})["x.servers"]
		if got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

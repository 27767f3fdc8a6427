package rabbitmq

import (
	"fmt"
	"os"
	"testing"

	"github.com/eddystream/eddy/connector"
	amqp "github.com/rabbitmq/amqp091-go"
)

// TestTopicMatches checks the matching of topic exchange binding keys.
func TestTopicMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, key string
		want         bool
	}{
		{"orders.#", "orders.eu", true},
		{"orders.#", "orders", true},
		{"orders.#", "orders.eu.paris", true},
		{"orders.*", "orders.eu", true},
		{"orders.*", "orders.eu.paris", false},
		{"orders.*", "orders", false},
		{"#", "", true},
		{"#", "a.b.c", true},
		{"*.eu.#", "orders.eu", true},
		{"*.eu.#", "eu", false},
		{"a.#.z", "a.z", true},
		{"a.#.z", "a.b.c.z", true},
		{"a.#.z", "a.b.c", false},
		{"orders.eu", "orders.eu", true},
		{"orders.eu", "orders.us", false},
		{"", "", true},
	} {
		if got := topicMatches(c.pattern, c.key); got != c.want {
			t.Errorf("topicMatches(%q, %q) = %v", c.pattern, c.key, got)
		}
	}
}

// TestExchangeType finds out the types of exchanges of the test broker,
// durable or not, without changing them.
func TestExchangeType(t *testing.T) {
	conn, err := amqp.Dial("amqp://guest:guest@127.0.0.1:5672/")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("RabbitMQ is unreachable: %v", err)
		}
		t.Skipf("RabbitMQ is unreachable: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	for i, kind := range []string{"direct", "topic", "fanout", "headers", "fanout"} {
		durable := i < 4
		name := fmt.Sprintf("eddy-test-type-%s-%d", kind, i)
		if err := ch.ExchangeDeclare(name, kind, durable, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		got := exchangeType(conn, name)
		if err := ch.ExchangeDelete(name, false, false); err != nil {
			t.Fatal(err)
		}
		if got != kind {
			t.Errorf("exchange %s (%s, durable %v): exchangeType says %q", name, kind, durable, got)
		}
	}
	if got := exchangeType(conn, "amq.topic"); got != "topic" {
		t.Errorf("amq.topic: %q", got)
	}
	if got := exchangeType(conn, "eddy-test-no-such-exchange"); got != "" {
		t.Errorf("an exchange that does not exist: %q", got)
	}
	if err := ch.ExchangeDeclarePassive("eddy-test-no-such-exchange", "fanout", true, false, false, false, nil); err == nil {
		t.Fatal("exchangeType declared the exchange it was asked about")
	}
}

// TestConfigNamesTheTable checks that the errors and logs of a SQL table's
// source name the table, and those of a source made in Go its name.
func TestConfigNamesTheTable(t *testing.T) {
	opts, err := spec.Validate(map[string]string{"url": "amqp://guest:guest@localhost:5672/", "queue": "q", "format": "json"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ctx  connector.Context
		want string
	}{
		{connector.Context{Name: "rabbitmq", Options: opts, Table: &connector.Table{Name: "orders_src"}}, "orders_src"},
		{connector.Context{Name: "orders-in", Options: opts}, "orders-in"},
	} {
		cfg, err := configOf(c.ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.name != c.want {
			t.Errorf("the config of %+v is named %q, want %q", c.ctx.Table, cfg.name, c.want)
		}
	}
}

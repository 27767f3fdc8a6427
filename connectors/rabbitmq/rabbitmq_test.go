package rabbitmq_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
	_ "github.com/eddystream/eddy/connectors/rabbitmq"
)

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[line](t, connectortest.OptionsCase{
		Name:  "rabbitmq",
		Valid: map[string]string{"queue": "orders", "format": "json", "username": "u", "password": "pw"},
	})
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		key     string
		problem string
	}{
		{false, map[string]string{"format": "json"}, "queue", "required for a source"},
		{false, map[string]string{"format": "json", "queue": "q", "routing-key": "k"}, "routing-key", "'exchange' is not set"},
		{false, map[string]string{"format": "json", "queue": "q", "binding.arguments": "x-match=all"}, "binding.arguments", "without 'exchange'"},
		{false, map[string]string{"format": "json", "queue": "q", "exchange": "e", "binding.arguments": "x-match"}, "binding.arguments", "not key=value"},
		{false, map[string]string{"format": "json", "queue": "q", "scan.startup.mode": "timestamp"}, "scan.startup.timestamp-millis", "is required"},
		{false, map[string]string{"format": "json", "queue": "q", "scan.startup.specific-offset": "3"}, "scan.startup.specific-offset", "is not 'specific-offset'"},
		{false, map[string]string{"format": "json", "queue": "q", "queue.type": "classic", "scan.startup.mode": "latest-offset"}, "scan.startup.mode", "applies to stream queues"},
		{false, map[string]string{"format": "json", "queue": "q", "queue.type": "stream", "scan.deduplication": "message-id"}, "scan.deduplication", "classic and quorum"},
		{false, map[string]string{"format": "json", "queue": "q", "queue.declare": "false", "queue.type": "stream"}, "queue.type", "'queue.declare' is 'false'"},
		{false, map[string]string{"format": "json", "queue": "q", "queue.arguments": "x-queue-type=stream"}, "queue.arguments", "set 'queue.type'"},
		{false, map[string]string{"format": "json", "queue": "q", "scan.prefetch-count": "70000"}, "scan.prefetch-count", "65535"},
		{false, map[string]string{"format": "json", "queue": "q", "sink.delivery-guarantee": "none"}, "sink.delivery-guarantee", "option of sinks"},
		{true, map[string]string{"format": "json"}, "queue", "required for a sink"},
		{true, map[string]string{"format": "json", "queue": "q", "routing-key": "other"}, "routing-key", "another queue"},
		{true, map[string]string{"format": "json", "queue": "q", "scan.prefetch-count": "10"}, "scan.prefetch-count", "option of sources"},
		{true, map[string]string{"format": "json", "exchange": "e", "sink.delivery-guarantee": "none", "sink.mandatory": "true"}, "sink.mandatory", "'none'"},
		{true, map[string]string{"format": "json", "queue": "q", "sink.delivery-guarantee": "none", "sink.publish-on-checkpoint": "true"}, "sink.publish-on-checkpoint", "'none'"},
		{true, map[string]string{"format": "json", "queue": "q", "url": "http://secret-pw@x:1/"}, "url", "scheme"},
		{true, map[string]string{"format": "json", "queue": "q", "url": "amqp://u:secret-pw@x:notaport/"}, "url", "not an AMQP URI"},
	} {
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "rabbitmq", c.opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "rabbitmq", c.opts)
		}
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != c.key || !strings.Contains(err.Error(), c.problem) {
			t.Errorf("%v: got %v, want an error of option '%s' saying %q", c.opts, err, c.key, c.problem)
		}
		if err != nil && strings.Contains(err.Error(), "secret-pw") {
			t.Errorf("%v: the error shows the password: %v", c.opts, err)
		}
	}
}

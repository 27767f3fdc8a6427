package mqtt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/connector/connectortest"
)

func TestOptionsConformance(t *testing.T) {
	connectortest.RunOptions[line](t, connectortest.OptionsCase{
		Name:  "mqtt",
		Valid: map[string]string{"topic": "sensors/room1", "format": "json", "username": "u", "password": "pw"},
	})
}

func TestOptionErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sink    bool
		opts    map[string]string
		key     string
		problem string
	}{
		{false, map[string]string{"format": "json"}, "topic", "required"},
		{false, map[string]string{"format": "json", "topic": "a/#/b"}, "topic", "'#' before its last level"},
		{false, map[string]string{"format": "json", "topic": "a/b+"}, "topic", "'+' inside a level"},
		{false, map[string]string{"format": "json", "topic": "a/b#"}, "topic", "'#' inside a level"},
		{false, map[string]string{"format": "json", "topic": "$share/g"}, "topic", "not a shared subscription"},
		{false, map[string]string{"format": "json", "topic": "$share/g/a", "scan.shared-subscription.group": "h"}, "topic", "'scan.shared-subscription.group' is set"},
		{false, map[string]string{"format": "json", "topic": "a", "scan.shared-subscription.group": "g/h"}, "scan.shared-subscription.group", "without '/'"},
		{false, map[string]string{"format": "json", "topic": "a", "qos": "3"}, "qos", "0, 1 or 2"},
		{false, map[string]string{"format": "json", "topic": "a", "qos": "0", "scan.startup.mode": "new-session"}, "scan.startup.mode", "needs 'qos' 1 or 2"},
		{false, map[string]string{"format": "json", "topic": "a", "mqtt.version": "3.1.1", "scan.receive-maximum": "100"}, "scan.receive-maximum", "MQTT 5 only"},
		{false, map[string]string{"format": "json", "topic": "a", "mqtt.version": "3.1.1", "scan.session.expiry-interval": "1 h"}, "scan.session.expiry-interval", "MQTT 5 only"},
		{false, map[string]string{"format": "json", "topic": "a", "scan.receive-maximum": "70000"}, "scan.receive-maximum", "1 to 65535"},
		{false, map[string]string{"format": "json", "topic": "a", "sink.retain": "true"}, "sink.retain", "option of sinks"},
		{false, map[string]string{"format": "json", "topic": "a", "url": "http://x:1"}, "url", "scheme"},
		{false, map[string]string{"format": "json", "topic": "a", "url": "tcp://u:secret-pw@x:1"}, "url", "credentials"},
		{false, map[string]string{"format": "json", "topic": "a", "keep-alive": "1 d"}, "keep-alive", "65535 s"},
		{false, map[string]string{"format": "json", "topic": "a", "connection.timeout": "0 s"}, "connection.timeout", "above 0"},
		{false, map[string]string{"format": "json", "topic": "a", "tls.ca-file": notPEM, "url": "ssl://x"}, "tls.ca-file", "no PEM certificate"},
		{false, map[string]string{"format": "json", "topic": "a", "tls.ca-file": filepath.Join(dir, "missing.pem"), "url": "ssl://x"}, "tls.ca-file", "cannot be read"},
		{false, map[string]string{"format": "json", "topic": "a", "tls.key-file": notPEM, "url": "ssl://x"}, "tls.cert-file", "set both"},
		{false, map[string]string{"format": "json", "topic": "a", "tls.ca-file": notPEM}, "url", "names no TLS server"},
		{true, map[string]string{"format": "json"}, "topic", "required"},
		{true, map[string]string{"format": "json", "topic": "a,b"}, "topic", "one topic"},
		{true, map[string]string{"format": "json", "topic": "a/+"}, "topic", "wildcard"},
		{true, map[string]string{"format": "json", "topic": "$SYS/x"}, "topic", "starts with '$'"},
		{true, map[string]string{"format": "json", "topic": "a", "qos": "0", "sink.delivery-guarantee": "at-least-once"}, "sink.delivery-guarantee", "needs 'qos' 1 or 2"},
		{true, map[string]string{"format": "json", "topic": "a", "scan.startup.mode": "new-session"}, "scan.startup.mode", "option of sources"},
		{true, map[string]string{"format": "json", "topic": "a", "mqtt.version": "3.1.1", "sink.message-expiry-interval": "1 min"}, "sink.message-expiry-interval", "MQTT 5 only"},
		{true, map[string]string{"format": "json", "topic": "a", "password": "secret-pw"}, "password", "without 'username'"},
	} {
		var err error
		if c.sink {
			_, err = connector.OpenSink[line](connector.Default, "mqtt", c.opts)
		} else {
			_, err = connector.OpenSource[line](connector.Default, "mqtt", c.opts)
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

// TestOverlappingFilters refuses filters some topic matches twice, naming
// both, and takes filters no topic matches twice.
func TestOverlappingFilters(t *testing.T) {
	for _, c := range []struct {
		topics  string
		overlap bool
	}{
		{"a/+,a/b", true},
		{"a/b,a/b", true},
		{"a/#,a/b/c", true},
		{"a/#,a", true},
		{"#,x/y", true},
		{"+/a,x/+", true},
		{"a/+/c,a/b/+", true},
		{"$share/g/a/+,a/b", true},
		{"a/0,a/1", false},
		{"a/+,a/+/x", false},
		{"a/+/c,a/b/d", false},
		{"#,$SYS/x", false},
		{"+/x,$SYS/x", false},
		{"a,a/+", false},
	} {
		_, err := connector.OpenSource[line](connector.Default, "mqtt", map[string]string{"format": "json", "topic": c.topics})
		if !c.overlap {
			if err != nil {
				t.Errorf("%s: %v, want no error", c.topics, err)
			}
			continue
		}
		parts := strings.Split(c.topics, ",")
		var oe *connector.OptionError
		if !errors.As(err, &oe) || oe.Key != "topic" || !strings.Contains(err.Error(), "'"+parts[0]+"'") || !strings.Contains(err.Error(), "'"+parts[1]+"'") {
			t.Errorf("%s: got %v, want an error of option 'topic' naming both filters", c.topics, err)
		}
	}
}

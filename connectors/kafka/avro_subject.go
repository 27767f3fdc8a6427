package kafka

import (
	"maps"
	"strings"

	"github.com/eddystream/eddy/connector"
)

// withDefaultSubject gives the avro-confluent format its subject as
// Flink's kafka connectors default it, '<topic>-value' for the value
// format and '<topic>-key' for the key format ('what'), when the user set
// none and 'topic' names one topic. opts is not changed: a copy is
// returned.
func withDefaultSubject(o connector.Options, name string, opts map[string]string, what string) map[string]string {
	if name != "avro-confluent" || opts["subject"] != "" {
		return opts
	}
	topic := strings.TrimSpace(str(o, "topic"))
	if topic == "" || strings.Contains(topic, ";") {
		return opts
	}
	out := maps.Clone(opts)
	if out == nil {
		out = map[string]string{}
	}
	out["subject"] = topic + "-" + what
	return out
}

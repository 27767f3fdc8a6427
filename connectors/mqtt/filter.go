package mqtt

import (
	"strings"

	"github.com/eddystream/eddy/connector"
)

// tableSource is the source of a table of messages. It takes conditions
// on the 'topic' metadata column that the broker evaluates itself
// (connector.FilterableSource): topic = 'sensors/room1/temperature'
// narrows the subscription to that topic.
type tableSource struct {
	*source[connector.TableRecord]
	topicCol int // the index of the 'topic' column (VARCHAR) in the rows, or -1
}

// newTableSource returns the source of a table whose rows are of type t.
func newTableSource(c *config, t *connector.Table, dec func() messageDecoder[connector.TableRecord]) *tableSource {
	return &tableSource{source: &source[connector.TableRecord]{cfg: c, newDecoder: dec}, topicCol: connector.MetadataColumn(t, "topic")}
}

// ApplyFilters accepts the equalities of the 'topic' metadata column
// (declared STRING or VARCHAR) with a literal topic, one without
// wildcards. The source returned subscribes to that topic alone when one
// of its filters matches it, so that the broker sends no message of
// another topic, and reads nothing (its readers end at once) when none
// does or when the equalities name different topics. With a shared
// subscription ('scan.shared-subscription.group' or '$share/' filters)
// the subscriptions stay as they are, since narrowing one would take it
// out of the group it shares with others: the readers drop the messages
// of other topics before decoding them. Other predicates are left to the
// planner.
func (s *tableSource) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	if s.topicCol < 0 {
		return nil, nil
	}
	acc, want := connector.StringEqualities(preds, s.topicCol, topicName)
	if len(acc) == 0 {
		return nil, nil
	}
	n := *s.cfg
	n.narrowed, n.only = true, s.cfg.narrowTo(want)
	switch {
	case n.only == "":
		n.topics = nil // no topic can pass
	case !n.shared():
		n.topics = []string{n.only}
	}
	return &tableSource{source: &source[connector.TableRecord]{cfg: &n, newDecoder: s.newDecoder}, topicCol: s.topicCol}, acc
}

// topicName says whether t is a topic a message can be published to:
// non-empty UTF-8 without NUL characters or wildcards.
func topicName(t string) bool {
	return checkText(t) == nil && !strings.ContainsAny(t, "+#")
}

// shared says whether the source reads shared subscriptions.
func (c *config) shared() bool {
	if c.shareGroup != "" {
		return true
	}
	for _, f := range c.topics {
		if strings.HasPrefix(f, "$share/") {
			return true
		}
	}
	return false
}

// narrowTo returns the one topic that every topic of want equals and that
// a filter of the source matches, or "" if there is none.
func (c *config) narrowTo(want []string) string {
	x := want[0]
	for _, w := range want[1:] {
		if w != x {
			return ""
		}
	}
	if c.narrowed && c.only != x {
		return "" // narrowed before, to another topic or to nothing
	}
	for _, f := range c.topics {
		if topicMatches(plainFilter(f), x) {
			return x
		}
	}
	return ""
}

// topicMatches says whether the filter (with wildcards) matches the topic
// name, as an MQTT broker decides: '+' matches one level, a trailing '#'
// the rest, including none ('a/#' matches 'a'), and a wildcard in the
// first level does not match a topic starting with '$'.
func topicMatches(filter, topic string) bool {
	if strings.HasPrefix(topic, "$") && (strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")) {
		return false
	}
	fl, tl := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, f := range fl {
		if f == "#" {
			return true
		}
		if i >= len(tl) || (f != "+" && f != tl[i]) {
			return false
		}
	}
	return len(fl) == len(tl)
}

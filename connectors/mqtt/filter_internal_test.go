package mqtt

import (
	"slices"
	"testing"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// TestTopicMatches checks the matching of topic names by filters.
func TestTopicMatches(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"a/b", "a/b", true},
		{"a/b", "a/c", false},
		{"a/+", "a/b", true},
		{"a/+", "a/b/c", false},
		{"a/+", "a", false},
		{"a/#", "a", true},
		{"a/#", "a/b/c", true},
		{"#", "a/b", true},
		{"#", "$SYS/uptime", false},
		{"+/uptime", "$SYS/uptime", false},
		{"$SYS/#", "$SYS/uptime", true},
		{"+/+", "/a", true},
		{"a/+/c", "a//c", true},
	} {
		if got := topicMatches(c.filter, c.topic); got != c.want {
			t.Errorf("topicMatches(%q, %q) = %v", c.filter, c.topic, got)
		}
	}
}

// TestNarrowedSubscriptions checks what a narrowed source subscribes to:
// the topic alone, nothing, or, with shared subscriptions, its filters as
// they were.
func TestNarrowedSubscriptions(t *testing.T) {
	tb := &connector.Table{Name: "t", Schema: types.MustRowType(types.F("v", types.Int())),
		Metadata: []string{"topic"}, MetadataTypes: []types.Type{types.String()}}
	eq := func(v string) connector.Predicate {
		return connector.Predicate{Path: []int{1}, Op: connector.OpEqual, Value: v}
	}
	for _, c := range []struct {
		name   string
		opts   map[string]string
		preds  []connector.Predicate
		topics []string
		only   string
	}{
		{"one filter", map[string]string{"topic": "a/+"}, []connector.Predicate{eq("a/b")}, []string{"a/b"}, "a/b"},
		{"second filter", map[string]string{"topic": "a/+,c/#"}, []connector.Predicate{eq("c/d/e")}, []string{"c/d/e"}, "c/d/e"},
		{"no filter matches", map[string]string{"topic": "a/+"}, []connector.Predicate{eq("a/b/c")}, nil, ""},
		{"two topics", map[string]string{"topic": "a/+"}, []connector.Predicate{eq("a/b"), eq("a/c")}, nil, ""},
		{"group", map[string]string{"topic": "a/+", "scan.shared-subscription.group": "g"}, []connector.Predicate{eq("a/b")}, []string{"a/+"}, "a/b"},
		{"shared filter", map[string]string{"topic": "$share/g/a/+"}, []connector.Predicate{eq("a/b")}, []string{"$share/g/a/+"}, "a/b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts["format"] = "json"
			src, err := connector.OpenTableSource(connector.Default, "mqtt", c.opts, tb)
			if err != nil {
				t.Fatal(err)
			}
			n, acc := src.(connector.FilterableSource).ApplyFilters(c.preds)
			if len(acc) != len(c.preds) {
				t.Fatalf("accepted %v of %v", acc, c.preds)
			}
			cfg := n.(*tableSource).cfg
			if !cfg.narrowed || cfg.only != c.only || !slices.Equal(cfg.topics, c.topics) {
				t.Fatalf("narrowed %v to %q, subscribing to %q; want %q, subscribing to %q", cfg.narrowed, cfg.only, cfg.topics, c.only, c.topics)
			}
			if src.(*tableSource).cfg.narrowed {
				t.Fatal("ApplyFilters changed the source it was called on")
			}
			if cfg.clientPrefix("t") == src.(*tableSource).cfg.clientPrefix("t") && !slices.Equal(cfg.topics, src.(*tableSource).cfg.topics) {
				t.Fatal("the narrowed source reads under the client ids of the source it came from")
			}
			// Narrowing again to the same topic keeps it; to another reads
			// nothing.
			again, _ := n.(connector.FilterableSource).ApplyFilters(c.preds[:1])
			if got := again.(*tableSource).cfg.only; got != c.only {
				t.Fatalf("narrowed again to %q; want %q", got, c.only)
			}
			other, _ := n.(connector.FilterableSource).ApplyFilters([]connector.Predicate{eq("zz")})
			if oc := other.(*tableSource).cfg; oc.only != "" || len(oc.topics) != 0 {
				t.Fatalf("narrowed to another topic: %q, subscribing to %q", oc.only, oc.topics)
			}
		})
	}
}

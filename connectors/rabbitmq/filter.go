package rabbitmq

import (
	"fmt"
	"regexp"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

// tableSource is the source of a table of messages. It takes conditions
// on the 'routing-key' metadata column (connector.FilterableSource):
// routing-key = 'orders.eu' leaves out the messages of other routing keys
// before decoding them and, where the source declares the queue and binds
// it itself, narrows the binding so that the broker routes no other
// message to the queue.
type tableSource struct {
	*source[connector.TableRecord]
	keyCol int // the index of the 'routing-key' column (VARCHAR) in the rows, or -1
}

// newTableSource returns the source of the table t.
func newTableSource(c *config, t *connector.Table, dec func() connector.Decoder[connector.TableRecord]) *tableSource {
	return &tableSource{source: &source[connector.TableRecord]{cfg: c, newDecoder: dec}, keyCol: connector.MetadataColumn(t, "routing-key")}
}

// ApplyFilters accepts the equalities of the 'routing-key' metadata
// column (declared STRING or VARCHAR) with a constant. The source
// returned emits the messages of that routing key alone (none when the
// equalities name different keys), leaving out the others before
// decoding them. On a job's first run, when it declares the queue itself
// (it did not exist) and binds it to 'exchange' without
// 'binding.arguments', it narrows the binding too: to a topic exchange
// it binds the routing key instead of the pattern of 'routing-key' when
// the pattern matches it, and not at all when it does not; to a direct
// exchange it binds nothing when 'routing-key' is another key. Other
// predicates are left to the planner.
func (s *tableSource) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	if s.keyCol < 0 {
		return nil, nil
	}
	acc, want := connector.StringEqualities(preds, s.keyCol, nil)
	if len(acc) == 0 {
		return nil, nil
	}
	n := *s.cfg
	x, ok := want[0], true
	for _, w := range want[1:] {
		ok = ok && w == x
	}
	if s.cfg.narrowed {
		ok = ok && !s.cfg.none && s.cfg.only == x
	}
	n.narrowed, n.only, n.none = true, x, !ok
	return &tableSource{source: &source[connector.TableRecord]{cfg: &n, newDecoder: s.newDecoder}, keyCol: s.keyCol}, acc
}

// passes says whether a message of the routing key passes the source's
// condition on the routing key.
func (c *config) passes(key string) bool {
	return !c.narrowed || (!c.none && key == c.only)
}

// binding returns the key to bind the queue the source has just declared
// to 'exchange' with, and false if the queue is better left unbound: no
// message the source would emit can reach it.
func (c *config) binding(conn *amqp.Connection) (string, bool) {
	if !c.narrowed || len(c.bindingArgs) > 0 {
		return c.routingKey, true
	}
	switch exchangeType(conn, c.exchange) {
	case amqp.ExchangeDirect:
		if c.none || c.only != c.routingKey {
			return "", false
		}
		return c.routingKey, true
	case amqp.ExchangeTopic:
		if c.none || !topicMatches(c.routingKey, c.only) {
			return "", false
		}
		return c.only, true
	}
	// Fanout, headers and other exchanges: routing keys do not decide, or
	// decide otherwise.
	return c.routingKey, true
}

// inequivalentType is how RabbitMQ refuses to declare an exchange of
// another type than the one that exists.
var inequivalentType = regexp.MustCompile(`inequivalent arg 'type' for exchange .* but current is '([^']*)'`)

// exchangeType returns the type of an existing exchange ("direct",
// "topic", ...), or "" if it cannot tell. AMQP 0-9-1 has no method that
// says it: a declaration of a fanout exchange of the same name either
// succeeds (or fails on another of its properties), and it is one, or
// fails saying the type it has. The exchanges of RabbitMQ ('amq.') cannot
// be declared; their names say their types.
func exchangeType(conn *amqp.Connection, name string) string {
	switch name {
	case "amq.direct":
		return amqp.ExchangeDirect
	case "amq.topic", "amq.rabbitmq.trace":
		return amqp.ExchangeTopic
	case "amq.fanout":
		return amqp.ExchangeFanout
	case "amq.headers", "amq.match":
		return amqp.ExchangeHeaders
	}
	if name == "" || strings.HasPrefix(name, "amq.") {
		return ""
	}
	ch, err := conn.Channel()
	if err != nil {
		return ""
	}
	defer ch.Close()
	// It must exist: the probe below would declare it otherwise.
	if err := ch.ExchangeDeclarePassive(name, amqp.ExchangeFanout, true, false, false, false, nil); err != nil {
		return ""
	}
	if ch, err = conn.Channel(); err != nil {
		return ""
	}
	defer ch.Close()
	err = ch.ExchangeDeclare(name, amqp.ExchangeFanout, true, false, false, false, nil)
	if err == nil {
		return amqp.ExchangeFanout
	}
	if amqpCode(err) != amqp.PreconditionFailed {
		return ""
	}
	if m := inequivalentType.FindStringSubmatch(err.Error()); m != nil {
		return m[1]
	}
	if strings.Contains(err.Error(), "inequivalent arg") {
		return amqp.ExchangeFanout // the type matched; another property did not
	}
	return ""
}

// topicMatches says whether the binding key of a topic exchange matches
// the routing key: words separated by '.', '*' matching one word and '#'
// zero or more.
func topicMatches(pattern, key string) bool {
	return wordsMatch(strings.Split(pattern, "."), strings.Split(key, "."))
}

func wordsMatch(p, k []string) bool {
	for len(p) > 0 {
		switch p[0] {
		case "#":
			for i := 0; i <= len(k); i++ {
				if wordsMatch(p[1:], k[i:]) {
					return true
				}
			}
			return false
		case "*":
			if len(k) == 0 {
				return false
			}
		default:
			if len(k) == 0 || k[0] != p[0] {
				return false
			}
		}
		p, k = p[1:], k[1:]
	}
	return len(k) == 0
}

// describeBinding says how the source bound its queue, for logs.
func (c *config) describeBinding(key string, bound bool) string {
	if !bound && c.none {
		return fmt.Sprintf("queue %q is not bound to exchange %q: the conditions on the routing key name different keys, which no message has", c.queue, c.exchange)
	}
	if !bound {
		return fmt.Sprintf("queue %q is not bound to exchange %q: no message of routing key %q can reach it through the binding of 'routing-key' = '%s'", c.queue, c.exchange, c.only, c.routingKey)
	}
	return fmt.Sprintf("queue %q is bound to exchange %q with routing key %q", c.queue, c.exchange, key)
}

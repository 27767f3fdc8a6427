package rabbitmq

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// tableSource is the source of a table of messages. It takes conditions
// on the 'routing-key' metadata column and on the 'header.<name>' columns
// of string headers (connector.FilterableSource): routing-key =
// 'orders.eu' or region = 'eu' (region STRING METADATA FROM
// 'header.region') leaves out the other messages before decoding them
// and, where the source declares the queue and binds it itself, narrows
// the binding so that the broker routes no other message to the queue.
type tableSource struct {
	*source[connector.TableRecord]
	keyCol  int         // the index of the 'routing-key' column (VARCHAR) in the rows, or -1
	headers []headerCol // the columns of string headers
}

// headerCol is a column of the rows that holds a string header.
type headerCol struct {
	name string // the header's name
	col  int
}

// newTableSource returns the source of the table t.
func newTableSource(c *config, t *connector.Table, dec func() connector.Decoder[connector.TableRecord]) *tableSource {
	ts := &tableSource{source: &source[connector.TableRecord]{cfg: c, newDecoder: dec}, keyCol: connector.MetadataColumn(t, "routing-key")}
	for i, k := range t.Metadata {
		if name, ok := headerName(k); ok && t.MetadataTypes[i].Kind() == types.KindVarChar {
			ts.headers = append(ts.headers, headerCol{name: name, col: t.Schema.Len() + i})
		}
	}
	return ts
}

// ApplyFilters accepts the equalities of the 'routing-key' metadata
// column and of the columns of string headers ('header.<name>', declared
// STRING or VARCHAR) with a constant. The source returned emits the
// messages of that routing key and those header values alone (none when
// the equalities of one column name different values), leaving out the
// others before decoding them. On a job's first run, when it declares the
// queue itself (it did not exist) and binds it to 'exchange' without
// 'binding.arguments', it narrows the binding too: to a topic exchange it
// binds the routing key instead of the pattern of 'routing-key' when the
// pattern matches it, and not at all when it does not; to a direct
// exchange it binds nothing when 'routing-key' is another key; to a
// headers exchange it binds with the header values ("x-match" = "all").
// Other predicates are left to the planner.
func (s *tableSource) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	n := *s.cfg
	var accepted []int
	if s.keyCol >= 0 {
		acc, want := connector.StringEqualities(preds, s.keyCol, nil)
		if len(acc) > 0 {
			x, ok := want[0], true
			for _, w := range want[1:] {
				ok = ok && w == x
			}
			if s.cfg.narrowed {
				ok = ok && !s.cfg.none && s.cfg.only == x
			}
			n.narrowed, n.only, n.none = true, x, !ok
			accepted = append(accepted, acc...)
		}
	}
	cloned := false
	for _, h := range s.headers {
		acc, want := connector.StringEqualities(preds, h.col, nil)
		if len(acc) == 0 {
			continue
		}
		if !cloned {
			n.headerEq, cloned = maps.Clone(s.cfg.headerEq), true
			if n.headerEq == nil {
				n.headerEq = map[string]string{}
			}
		}
		x := want[0]
		for _, w := range want[1:] {
			n.headersNone = n.headersNone || w != x
		}
		if had, ok := n.headerEq[h.name]; ok && had != x {
			n.headersNone = true
		}
		n.headerEq[h.name] = x
		accepted = append(accepted, acc...)
	}
	if len(accepted) == 0 {
		return nil, nil
	}
	slices.Sort(accepted)
	return &tableSource{source: &source[connector.TableRecord]{cfg: &n, newDecoder: s.newDecoder}, keyCol: s.keyCol, headers: s.headers}, accepted
}

// passes says whether a message of the routing key and headers passes the
// source's conditions on them.
func (c *config) passes(key string, headers amqp.Table) bool {
	if c.narrowed && (c.none || key != c.only) {
		return false
	}
	if c.headersNone {
		return false
	}
	for name, want := range c.headerEq {
		if v, ok := stringHeader(headers[name]); !ok || v != want {
			return false
		}
	}
	return true
}

// binding returns the key and arguments to bind the queue the source has
// just declared to 'exchange' with, and false if the queue is better left
// unbound: no message the source would emit can reach it.
func (c *config) binding(conn *amqp.Connection) (string, amqp.Table, bool) {
	if (!c.narrowed && len(c.headerEq) == 0 && !c.headersNone) || len(c.bindingArgs) > 0 {
		return c.routingKey, c.bindingArgs, true
	}
	switch exchangeType(conn, c.exchange) {
	case amqp.ExchangeDirect:
		if c.narrowed && (c.none || c.only != c.routingKey) {
			return "", nil, false
		}
	case amqp.ExchangeTopic:
		if !c.narrowed {
			break
		}
		if c.none || !topicMatches(c.routingKey, c.only) {
			return "", nil, false
		}
		return c.only, nil, true
	case amqp.ExchangeHeaders:
		if c.headersNone {
			return "", nil, false
		}
		if len(c.headerEq) > 0 {
			args := amqp.Table{"x-match": "all"}
			for k, v := range c.headerEq {
				args[k] = v
			}
			return c.routingKey, args, true
		}
	}
	// Fanout and other exchanges, and conditions that the exchange's
	// type does not route by: the binding as configured.
	return c.routingKey, nil, true
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
func (c *config) describeBinding(key string, args amqp.Table, bound bool) string {
	switch {
	case !bound && c.headersNone:
		return fmt.Sprintf("queue %q is not bound to exchange %q: the conditions on a header name different values, which no message has", c.queue, c.exchange)
	case !bound && c.none:
		return fmt.Sprintf("queue %q is not bound to exchange %q: the conditions on the routing key name different keys, which no message has", c.queue, c.exchange)
	case !bound:
		return fmt.Sprintf("queue %q is not bound to exchange %q: no message of routing key %q can reach it through the binding of 'routing-key' = '%s'", c.queue, c.exchange, c.only, c.routingKey)
	case len(args) > 0:
		return fmt.Sprintf("queue %q is bound to exchange %q with the arguments %v", c.queue, c.exchange, map[string]any(args))
	}
	return fmt.Sprintf("queue %q is bound to exchange %q with routing key %q", c.queue, c.exchange, key)
}

package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// requestTimeout bounds the JetStream API calls of enumerators and
// writers.
const requestTimeout = 30 * time.Second

// servers returns the 'url' option with any user and password in it
// removed, for errors and logs.
func (c *config) servers() string {
	parts := strings.Split(c.urls, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if u, err := url.Parse(p); err == nil && u.User != nil {
			u.User = nil
			p = u.String()
		}
		parts[i] = p
	}
	return strings.Join(parts, ",")
}

// connect opens a connection for what (a reader, a writer, an
// enumerator), logging asynchronous errors (a slow consumer dropping
// messages, say) to log.
func (c *config) connect(what string, log *slog.Logger, extra ...natsgo.Option) (*natsgo.Conn, error) {
	opts := []natsgo.Option{
		natsgo.Name("eddy " + what),
		natsgo.MaxReconnects(-1),
		natsgo.ErrorHandler(func(_ *natsgo.Conn, sub *natsgo.Subscription, err error) {
			if log == nil {
				return
			}
			if sub != nil {
				log.Warn("nats: subscription error", "subject", sub.Subject, "error", err)
				return
			}
			log.Warn("nats: connection error", "error", err)
		}),
	}
	if c.username != "" {
		opts = append(opts, natsgo.UserInfo(c.username, c.password))
	}
	if c.token != "" {
		opts = append(opts, natsgo.Token(c.token))
	}
	if c.credsFile != "" {
		opts = append(opts, natsgo.UserCredentials(c.credsFile))
	}
	opts = append(opts, extra...)
	nc, err := natsgo.Connect(c.urls, opts...)
	if err != nil {
		return nil, fmt.Errorf("nats %q: connecting %s to %s: %w; check 'url' and the credentials options", c.name, what, c.servers(), err)
	}
	return nc, nil
}

// jetStream connects and checks that the stream exists; opts configure
// the JetStream context.
func (c *config) jetStream(what string, log *slog.Logger, opts ...jetstream.JetStreamOpt) (*natsgo.Conn, jetstream.JetStream, jetstream.Stream, error) {
	nc, err := c.connect(what, log)
	if err != nil {
		return nil, nil, nil, err
	}
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, nil, fmt.Errorf("nats %q: %w", c.name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	st, err := js.Stream(ctx, c.stream)
	if err != nil {
		nc.Close()
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return nil, nil, nil, fmt.Errorf("nats %q: stream %q does not exist on %s: %w; create it (nats stream add) or fix 'stream'", c.name, c.stream, c.servers(), err)
		}
		return nil, nil, nil, fmt.Errorf("nats %q: looking up stream %q on %s: %w; is JetStream enabled on the server?", c.name, c.stream, c.servers(), err)
	}
	return nc, js, st, nil
}

package redis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// requestTimeout bounds the commands of enumerators, acknowledgements and
// commits.
const requestTimeout = 30 * time.Second

// parseURL parses a Redis URL into client options, with errors that never
// quote it (it may hold a password).
func parseURL(v string) (*goredis.Options, error) {
	opts, err := goredis.ParseURL(strings.TrimSpace(v))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, fmt.Errorf("not a URL (%v); write 'redis://host:6379/0'", ue.Err)
		}
		msg := err.Error()
		if u, perr := url.Parse(strings.TrimSpace(v)); perr == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" {
				msg = strings.ReplaceAll(msg, p, "******")
			}
		}
		return nil, errors.New(msg)
	}
	return opts, nil
}

// server returns the 'url' option without user, password and parameters,
// for errors and logs.
func (c *config) server() string {
	u, err := url.Parse(c.url)
	if err != nil {
		return "(an unparsable URL)"
	}
	if u.Scheme == "unix" {
		return "unix://" + u.Path
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// scrubbed is an error whose message has the password removed.
type scrubbed struct {
	msg string
	err error
}

func (s *scrubbed) Error() string { return s.msg }
func (s *scrubbed) Unwrap() error { return s.err }

// scrub returns err with any password of the configuration removed from
// its message.
func (c *config) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	pws := []string{c.password}
	if u, perr := url.Parse(c.url); perr == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			pws = append(pws, p)
		}
	}
	changed := false
	for _, p := range pws {
		if p != "" && strings.Contains(msg, p) {
			msg, changed = strings.ReplaceAll(msg, p, "******"), true
		}
	}
	if !changed {
		return err
	}
	return &scrubbed{msg, err}
}

// client returns a client of the server; what names its user in errors
// ("reader 0 of orders"). It does not connect until the first command.
func (c *config) client() (*goredis.Client, error) {
	opts, err := parseURL(c.url)
	if err != nil {
		return nil, fmt.Errorf("redis %q: option 'url': %w", c.name, err)
	}
	if c.username != "" {
		opts.Username = c.username
	}
	if c.password != "" {
		opts.Password = c.password
	}
	opts.ClientName = "eddy"
	// Blocking reads set their own read timeouts; commands must not be
	// retried behind the connector's back when it counts on their effect
	// once (XREADGROUP delivers, a commit script writes).
	opts.MaxRetries = -1
	opts.DisableIdentity = true
	return goredis.NewClient(opts), nil
}

// connect returns a client and checks that the server answers.
func (c *config) connect(what string) (*goredis.Client, error) {
	cli, err := c.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := cli.Ping(ctx).Err(); err != nil {
		cli.Close()
		return nil, fmt.Errorf("redis %q: %s cannot reach %s: %w; check 'url' (and 'username', 'password') and that the server runs", c.name, what, c.server(), c.scrub(err))
	}
	return cli, nil
}

// isNoGroup reports whether err is Redis's error for a missing group or
// stream.
func isNoGroup(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOGROUP")
}

// isNoScript reports whether err is Redis's error for an unknown script.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// isWrongType reports whether err is Redis's error for a key of another
// type.
func isWrongType(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE")
}

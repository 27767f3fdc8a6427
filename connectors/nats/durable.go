package nats

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Durable consumers ('consumer'). The source still reads through ordered
// consumers and keeps its positions in eddy's checkpoints; each split also
// has a durable pull consumer on the server that nothing pulls from, whose
// position a reader moves (the consumer reset API of nats-server 2.14,
// ADR-60) to the split's position in each checkpoint that completes. Its
// ack floor is then the last message that checkpoint accounts for: `nats
// consumer info` shows how far the job has got and how much is pending,
// an interest or limits stream keeps the messages the job still needs for
// as long as the consumer holds interest in them, and a job started
// without a checkpoint or savepoint resumes where the consumer is (at
// least once: what was read after the last completed checkpoint is read
// again).

// durableWarnEvery is how often a reader repeats a warning that it cannot
// move its durable consumers.
const durableWarnEvery = time.Minute

// checkConsumerName checks the 'consumer' option.
func checkConsumerName(v string) error {
	if v == "" || strings.ContainsAny(v, " \t\r\n.*>/\\") {
		return fmt.Errorf("a consumer name has no spaces, dots, wildcards or slashes")
	}
	return nil
}

// durableName returns the name of the durable consumer of the split that
// reads filter ("" for the whole stream): 'consumer' when the source has
// one filter or none, else 'consumer'-i for the i-th filter of 'subject'
// (counting from 1), the one that takes filter. It returns false if no
// filter of 'subject' takes it (a split restored from a savepoint of other
// options).
func (c *config) durableName(filter string) (string, bool) {
	if len(c.subjects) <= 1 {
		if len(c.subjects) == 1 && filter != c.subjects[0] && !subjectMatches(c.subjects[0], filter) {
			return "", false
		}
		return c.consumer, true
	}
	for i, f := range c.subjects {
		if f == filter || subjectMatches(f, filter) {
			return c.consumer + "-" + strconv.Itoa(i+1), true
		}
	}
	return "", false
}

// checkResetSupported fails unless the server is nats-server 2.14 or
// later, which can reset a consumer to a sequence.
func (c *config) checkResetSupported(nc *natsgo.Conn) error {
	v := nc.ConnectedServerVersion()
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) >= 2 {
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil && (major > 2 || (major == 2 && minor >= 14)) {
			return nil
		}
	}
	return fmt.Errorf("nats %q: 'consumer' needs nats-server 2.14 or later (it moves the consumer with the consumer reset API), and %s runs %q; upgrade the server or remove 'consumer'", c.name, c.servers(), v)
}

// durableConfig is the configuration of the durable consumer name of the
// split reading filter.
func (c *config) durableConfig(name, filter string) jetstream.ConsumerConfig {
	cc := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   fmt.Sprintf("eddy source %q: its ack floor is the last message of the stream a completed checkpoint of the job accounts for", c.name),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckAllPolicy,
	}
	if filter != "" {
		cc.FilterSubject = filter
	}
	return cc
}

// checkDurable checks that an existing durable consumer can serve: a pull
// consumer of the split's filter whose position can be reset anywhere.
func (c *config) checkDurable(info *jetstream.ConsumerInfo, filter string) error {
	cfg := info.Config
	filters := cfg.FilterSubjects
	if cfg.FilterSubject != "" {
		filters = append(filters, cfg.FilterSubject)
	}
	want := []string{}
	if filter != "" {
		want = []string{filter}
	}
	switch {
	case cfg.DeliverSubject != "":
		return fmt.Errorf("nats %q: consumer %q of stream %q is a push consumer, which the server keeps delivering to %q; give 'consumer' the name of a pull consumer or of none (the source creates it)", c.name, info.Name, c.stream, cfg.DeliverSubject)
	case !slices.Equal(filters, want):
		return fmt.Errorf("nats %q: consumer %q of stream %q filters %q, and the source reads %q with it; give 'consumer' another name, or delete the consumer (nats consumer rm %s %s)", c.name, info.Name, c.stream, strings.Join(filters, ","), filter, c.stream, info.Name)
	case cfg.DeliverPolicy != jetstream.DeliverAllPolicy && cfg.DeliverPolicy != jetstream.DeliverByStartSequencePolicy:
		return fmt.Errorf("nats %q: consumer %q of stream %q delivers %v, and the source moves it to any sequence, which needs the policy 'all' or 'by start sequence'; give 'consumer' another name, or delete the consumer", c.name, info.Name, c.stream, cfg.DeliverPolicy)
	}
	return nil
}

// openDurable finds the durable consumer of the split reading filter,
// creating it at start if there is none, and returns where a first run
// reads from: the message after the consumer's ack floor if it existed,
// else start.
func (c *config) openDurable(ctx context.Context, js jetstream.JetStream, filter string, start uint64) (uint64, error) {
	name, _ := c.durableName(filter)
	cons, err := js.Consumer(ctx, c.stream, name)
	switch {
	case err == nil:
		info := cons.CachedInfo()
		if err := c.checkDurable(info, filter); err != nil {
			return 0, err
		}
		next := info.AckFloor.Stream + 1
		if info.Config.DeliverPolicy == jetstream.DeliverByStartSequencePolicy {
			next = max(next, info.Config.OptStartSeq)
		}
		return next, nil
	case !errors.Is(err, jetstream.ErrConsumerNotFound):
		return 0, fmt.Errorf("nats %q: looking up consumer %q of stream %q: %w", c.name, name, c.stream, err)
	}
	if err := c.createDurable(ctx, js, name, filter, start); err != nil {
		return 0, err
	}
	return start, nil
}

// createDurable creates the durable consumer name of the split reading
// filter, at sequence at.
func (c *config) createDurable(ctx context.Context, js jetstream.JetStream, name, filter string, at uint64) error {
	if _, err := js.CreateConsumer(ctx, c.stream, c.durableConfig(name, filter)); err != nil {
		return fmt.Errorf("nats %q: creating consumer %q of stream %q: %w", c.name, name, c.stream, err)
	}
	if at > 1 {
		if _, err := js.ResetConsumerToSequence(ctx, c.stream, name, at); err != nil {
			return fmt.Errorf("nats %q: moving consumer %q of stream %q to sequence %d: %w", c.name, name, c.stream, at, err)
		}
	}
	return nil
}

// durables moves a reader's durable consumers to the positions of the
// checkpoints that complete, on a goroutine of its own so that a slow
// server does not hold up reading.
type durables struct {
	cfg  *config
	js   jetstream.JetStream
	log  *slog.Logger
	byCP map[int64]map[string]uint64 // checkpoint -> consumer -> next sequence
	done map[string]uint64           // consumer -> the sequence it was last moved to

	mu      sync.Mutex
	pending map[string]uint64 // consumer -> the sequence to move it to
	filters map[string]string // consumer -> the filter of its split
	wake    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
	warned  time.Time
}

func newDurables(cfg *config, js jetstream.JetStream, log *slog.Logger) *durables {
	d := &durables{cfg: cfg, js: js, log: log, byCP: map[int64]map[string]uint64{}, done: map[string]uint64{},
		pending: map[string]uint64{}, filters: map[string]string{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	go d.run()
	return d
}

// snapshot records the positions of checkpoint cp: consumer -> the next
// sequence of its split, with the filter of the split.
func (d *durables) snapshot(cp int64, pos map[string]uint64, filters map[string]string) {
	d.byCP[cp] = pos
	d.mu.Lock()
	for n, f := range filters {
		d.filters[n] = f
	}
	d.mu.Unlock()
}

// completed moves the consumers to the positions of checkpoint cp, and
// forgets those of earlier checkpoints.
func (d *durables) completed(cp int64) {
	pos, ok := d.byCP[cp]
	for c := range d.byCP {
		if c <= cp {
			delete(d.byCP, c)
		}
	}
	if !ok {
		return
	}
	d.mu.Lock()
	for n, seq := range pos {
		d.pending[n] = seq
	}
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// run moves the consumers as completed asks.
func (d *durables) run() {
	defer close(d.stopped)
	for {
		select {
		case <-d.wake:
			d.move()
		case <-d.stop:
			d.move() // what the last completed checkpoint says
			return
		}
	}
}

func (d *durables) move() {
	d.mu.Lock()
	work := d.pending
	d.pending = map[string]uint64{}
	filters := d.filters
	d.mu.Unlock()
	for name, seq := range work {
		if d.done[name] == seq {
			continue
		}
		d.mu.Lock()
		filter := filters[name]
		d.mu.Unlock()
		if err := d.reset(name, filter, seq); err != nil {
			if time.Since(d.warned) >= durableWarnEvery {
				d.warned = time.Now()
				d.log.Warn(fmt.Sprintf("nats %q: the durable consumer does not show the job's progress: %v; reading goes on, exactly once, from the checkpoints", d.cfg.name, err), "consumer", name, "stream", d.cfg.stream)
			}
			continue
		}
		d.done[name] = seq
	}
}

// reset moves the consumer name to seq, creating it again if it is gone.
func (d *durables) reset(name, filter string, seq uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	_, err := d.js.ResetConsumerToSequence(ctx, d.cfg.stream, name, seq)
	if err == nil {
		return nil
	}
	// The server answers a reset of a missing consumer with silence.
	if _, ierr := d.js.Consumer(ctx, d.cfg.stream, name); errors.Is(ierr, jetstream.ErrConsumerNotFound) {
		return d.cfg.createDurable(ctx, d.js, name, filter, seq)
	}
	return fmt.Errorf("moving consumer %q of stream %q to sequence %d: %w", name, d.cfg.stream, seq, err)
}

// close stops the goroutine once it has moved the consumers to the last
// completed checkpoint's positions, waiting for it at most a few seconds.
func (d *durables) close() {
	d.once.Do(func() { close(d.stop) })
	select {
	case <-d.stopped:
	case <-time.After(5 * time.Second):
	}
}

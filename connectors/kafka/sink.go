package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// encodeFunc turns a record into a message key and value; skip says the
// record writes nothing (the -U of an update, for upsert-kafka).
type encodeFunc[T any] func(v T) (key, val []byte, skip bool, err error)

// recordFunc turns a record into the message to produce, with its topic,
// headers and partition when it chooses them; nil writes nothing.
type recordFunc[T any] func(v T) (*kgo.Record, error)

// newSink returns the sink cfg describes, writing messages of a key and a
// value to the configured topic.
func newSink[T any](cfg *config, newEncoder func() encodeFunc[T]) connector.Sink[T] {
	return newRecordSink(cfg, func() recordFunc[T] {
		enc := newEncoder()
		return func(v T) (*kgo.Record, error) {
			key, val, skip, err := enc(v)
			if err != nil || skip {
				return nil, err
			}
			return &kgo.Record{Key: key, Value: val}, nil
		}
	})
}

// newRecordSink returns the sink cfg describes, writing the messages that
// newEncoder's functions make.
func newRecordSink[T any](cfg *config, newEncoder func() recordFunc[T]) connector.Sink[T] {
	if cfg.guarantee == exactlyOnce {
		return txSink[T]{connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, kafkaTx], error) {
			if err := prefixes.claim(cfg); err != nil {
				return nil, err
			}
			return &committer[T]{cfg: cfg, ctx: ctx, enc: newEncoder(), live: map[string]*kgo.Client{}}, nil
		}), cfg.changelogs}
	}
	return plainSink[T]{cfg: cfg, newEncoder: newEncoder}
}

// producerOpts are the options of a producing client of subtask.
// deliveryTimeout bounds how long a record may wait to be delivered.
const deliveryTimeout = 2 * time.Minute

// defaultTxTimeout is the transaction timeout when
// 'properties.transaction.timeout.ms' is not set: the default of the
// brokers' transaction.max.timeout.ms.
const defaultTxTimeout = 15 * time.Minute

func (c *config) producerOpts(subtask int) ([]kgo.Opt, error) {
	// Records not delivered in time fail, and with them the write or the
	// flush, as Kafka's delivery.timeout.ms does: without a limit, a full
	// buffer blocks a write for ever while the brokers are gone, and the
	// job neither fails nor restarts.
	opts := append([]kgo.Opt{kgo.RecordDeliveryTimeout(deliveryTimeout)}, c.client.produceOpts...)
	if len(c.topics) > 0 {
		opts = append(opts, kgo.DefaultProduceTopic(c.topics[0]))
	}
	if c.autoCreate {
		opts = append(opts, kgo.AllowAutoTopicCreation())
	}
	switch c.client.acks {
	case "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	}
	if c.guarantee == atLeastOnce && c.client.acks == "0" {
		return nil, c.optErr("properties.acks", "'0' waits for no acknowledgement, so nothing is known to be written at a checkpoint: use '1' or 'all' with 'sink.delivery-guarantee' = 'at-least-once', or choose 'none'")
	}
	if c.guarantee == exactlyOnce && c.client.acks != "all" && c.client.acks != "-1" {
		return nil, c.optErr("properties.acks", "must be 'all' with 'sink.delivery-guarantee' = 'exactly-once'")
	}
	if c.guarantee == none && c.client.acks == "all" {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	switch c.partitioner {
	case "fixed":
		opts = append(opts, kgo.RecordPartitioner(kgo.BasicConsistentPartitioner(func(string) func(*kgo.Record, int) int {
			return func(_ *kgo.Record, n int) int { return subtask % n }
		})))
	case "round-robin":
		opts = append(opts, kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	case "all-to-zero":
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	default:
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	}
	return opts, nil
}

// topicName names the topic of a sink for messages: the topic it writes,
// or what chooses the topic of each message.
func (c *config) topicName() string {
	if len(c.topics) > 0 {
		return c.topics[0]
	}
	return c.topicsOf
}

// errs collects the first error of asynchronous produce requests.
type errs struct {
	mu  sync.Mutex
	err error
}

func (e *errs) promise(_ *kgo.Record, err error) {
	if err != nil {
		e.mu.Lock()
		if e.err == nil {
			e.err = err
		}
		e.mu.Unlock()
	}
}

func (e *errs) first() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// plainSink is the at-least-once or unguaranteed sink.
type plainSink[T any] struct {
	cfg        *config
	newEncoder func() recordFunc[T]
}

// ChangelogMode says which changes the format writes.
func (s plainSink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s plainSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	opts, err := s.cfg.producerOpts(ctx.Subtask())
	if err != nil {
		return nil, err
	}
	cl, err := s.cfg.newClient(ctx.Log(), opts...)
	if err != nil {
		return nil, err
	}
	return &writer[T]{cfg: s.cfg, ctx: ctx, enc: s.newEncoder(), cl: cl}, nil
}

// writer produces records as they come; Flush waits for the brokers'
// acknowledgements (at-least-once) or only reports earlier failures.
type writer[T any] struct {
	cfg *config
	ctx connector.WriterContext
	enc recordFunc[T]
	cl  *kgo.Client
	errs
}

func (w *writer[T]) wrap(err error) error {
	return fmt.Errorf("%s %q: writing to topic %q: %w", w.cfg.connector, w.cfg.name, w.cfg.topicName(), err)
}

func (w *writer[T]) Write(records []T, ts []int64) error {
	if err := w.first(); err != nil {
		return w.wrap(err)
	}
	for i, v := range records {
		rec, err := w.enc(v)
		if err != nil {
			return w.wrap(err)
		}
		if rec != nil {
			if ts[i] != math.MinInt64 {
				rec.Timestamp = time.UnixMilli(ts[i])
			}
			connector.CountBytesOut(w.ctx, len(rec.Value))
			w.cl.Produce(context.Background(), rec, w.promise)
		}
	}
	return nil
}

func (w *writer[T]) Flush() error {
	if w.cfg.guarantee != none {
		ctx, cancel := ctxTimeout()
		defer cancel()
		if err := w.cl.Flush(ctx); err != nil {
			return w.wrap(err)
		}
	}
	if err := w.first(); err != nil {
		return w.wrap(err)
	}
	return nil
}

func (w *writer[T]) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = w.cl.Flush(ctx)
	w.cl.Close()
	return nil
}

// txSink is the exactly-once sink, with the changelog mode of its format.
type txSink[T any] struct {
	connector.TransactionalSink[T]
	mode changelog.Mode
}

// ChangelogMode says which changes the format writes.
func (s txSink[T]) ChangelogMode() changelog.Mode { return s.mode }

// kafkaTx is a transaction of the exactly-once sink: the records of one
// checkpoint interval of one subtask, written with the transactional id
// ID, which no other transaction uses. ProducerID and Epoch are the
// producer's once the records are flushed: with them, a restored job
// commits the transaction again by ending it on the transaction
// coordinator, without the producer that wrote it.
type kafkaTx struct {
	ID         string `json:"id"`
	ProducerID int64  `json:"producerId"`
	Epoch      int16  `json:"epoch"`
	Records    int64  `json:"records"`
}

// committer is the TwoPhaseCommitter of the exactly-once sink: one
// transactional producer per transaction, closed once it is committed.
type committer[T any] struct {
	cfg   *config
	ctx   connector.WriterContext
	enc   recordFunc[T]
	seq   int64
	live  map[string]*kgo.Client // the producers of transactions not yet ended
	admin *kgo.Client
	// closed is set by Close, which releases the claim of the prefix once.
	closed bool
	errs
}

func (c *committer[T]) wrap(tx kafkaTx, err error) error {
	return fmt.Errorf("%s %q: transaction %s on topic %q: %w", c.cfg.connector, c.cfg.name, tx.ID, c.cfg.topicName(), err)
}

// Begin starts a transaction with a fresh transactional id:
// '<prefix>-<subtask>-<n>', n increasing and at least the time in
// milliseconds, so that no run of the job uses an id twice.
func (c *committer[T]) Begin() (kafkaTx, error) {
	c.seq = max(c.seq+1, time.Now().UnixMilli())
	tx := kafkaTx{ID: fmt.Sprintf("%s-%d-%d", c.cfg.txPrefix, c.ctx.Subtask(), c.seq)}
	opts, err := c.cfg.producerOpts(c.ctx.Subtask())
	if err != nil {
		return tx, err
	}
	opts = append(opts, kgo.TransactionalID(tx.ID))
	// A transaction lives about a checkpoint interval, from the first
	// write after one barrier to the completion of the next checkpoint;
	// the broker aborts it after transaction.timeout.ms. Kafka clients
	// default to a minute or less, which checkpoints of a minute outlive:
	// eddy defaults to the brokers' usual maximum, 15 minutes.
	txTimeout := c.cfg.client.txTimeout
	if txTimeout <= 0 {
		txTimeout = defaultTxTimeout
	}
	opts = append(opts, kgo.TransactionTimeout(txTimeout))
	cl, err := c.cfg.newClient(c.ctx.Log(), opts...)
	if err != nil {
		return tx, err
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return tx, c.wrap(tx, err)
	}
	c.live[tx.ID] = cl
	running.add(tx.ID)
	return tx, nil
}

func (c *committer[T]) Write(tx *kafkaTx, v T) error {
	if err := c.first(); err != nil {
		return c.wrap(*tx, err)
	}
	rec, err := c.enc(v)
	if err != nil {
		return c.wrap(*tx, err)
	}
	if rec == nil {
		return nil
	}
	connector.CountBytesOut(c.ctx, len(rec.Value))
	c.live[tx.ID].Produce(context.Background(), rec, c.promise)
	tx.Records++
	return nil
}

// PreCommit waits until the brokers hold every record of tx and notes the
// producer's id and epoch.
func (c *committer[T]) PreCommit(tx *kafkaTx) error {
	cl := c.live[tx.ID]
	if tx.Records == 0 {
		// Nothing to commit: the transaction never started on the broker.
		cl.Close()
		delete(c.live, tx.ID)
		running.remove(tx.ID)
		tx.ID = ""
		return nil
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		return c.wrap(*tx, err)
	}
	if err := c.first(); err != nil {
		return c.wrap(*tx, err)
	}
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return c.wrap(*tx, err)
	}
	tx.ProducerID, tx.Epoch = id, epoch
	return nil
}

// Commit commits tx: through its producer in the run that wrote it, or by
// ending it on the coordinator with the producer id and epoch it was
// written with after a restore. Committing a transaction already committed
// succeeds. A transaction the broker has aborted meanwhile (after
// transaction.timeout.ms) cannot be committed: its records are lost, which
// is logged as an error, and the job goes on.
func (c *committer[T]) Commit(tx kafkaTx) error {
	if tx.ID == "" {
		return nil
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	if cl, ok := c.live[tx.ID]; ok {
		delete(c.live, tx.ID)
		defer running.remove(tx.ID)
		defer cl.Close()
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return c.wrap(tx, fmt.Errorf("committing: %w", err))
		}
		return nil
	}
	return c.endOnCoordinator(ctx, tx, true)
}

// endOnCoordinator ends tx with an EndTxn request.
func (c *committer[T]) endOnCoordinator(ctx context.Context, tx kafkaTx, commit bool) error {
	if c.admin == nil {
		cl, err := c.cfg.newClient(c.ctx.Log())
		if err != nil {
			return err
		}
		c.admin = cl
	}
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = tx.ID, tx.ProducerID, tx.Epoch, commit
	for attempt := 0; ; attempt++ {
		resp, err := req.RequestWith(ctx, c.admin)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		switch {
		case err == nil:
			return nil
		case !commit:
			c.ctx.Log().Info("kafka: aborting a transaction of an earlier run", "transactional.id", tx.ID, "error", err)
			return nil
		case errors.Is(err, kerr.InvalidTxnState), errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerIDMapping), errors.Is(err, kerr.InvalidProducerEpoch):
			c.ctx.Log().Error("kafka: a transaction of the restored checkpoint cannot be committed: the broker has aborted it (it outlived transaction.timeout.ms) or forgotten it; its records are lost",
				"transactional.id", tx.ID, "producer.id", tx.ProducerID, "epoch", tx.Epoch, "records", tx.Records, "error", err)
			return nil
		case (kerr.IsRetriable(err) || errors.Is(err, kerr.ConcurrentTransactions)) && attempt < 50 && ctx.Err() == nil:
			time.Sleep(100 * time.Millisecond)
		default:
			return c.wrap(tx, fmt.Errorf("committing after a restore: %w", err))
		}
	}
}

// Abort aborts tx.
func (c *committer[T]) Abort(tx kafkaTx) error {
	if tx.ID == "" {
		return nil
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	if cl, ok := c.live[tx.ID]; ok {
		delete(c.live, tx.ID)
		defer running.remove(tx.ID)
		defer cl.Close()
		if tx.Records == 0 {
			return nil
		}
		_ = cl.AbortBufferedRecords(ctx)
		if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
			c.ctx.Log().Warn("kafka: aborting a transaction", "transactional.id", tx.ID, "error", err)
		}
		return nil
	}
	if tx.ProducerID == 0 && tx.Epoch == 0 {
		return nil
	}
	return c.endOnCoordinator(ctx, tx, false)
}

// Recover aborts the transactions an earlier run of the job left open
// (abortLingering), but those the checkpoint holds, which the restore
// commits or aborts.
func (c *committer[T]) Recover(pending, current []kafkaTx) error {
	keep := map[string]bool{}
	for _, tx := range append(pending, current...) {
		keep[tx.ID] = true
	}
	return c.abortLingering(keep)
}

// Close closes the producers without ending their transactions: those
// pre-committed may be committed by a restored job. It releases the
// committer's claim of its prefix.
func (c *committer[T]) Close() error {
	if !c.closed {
		c.closed = true
		prefixes.release(c.cfg)
	}
	for id, cl := range c.live {
		cl.Close()
		delete(c.live, id)
		running.remove(id)
	}
	if c.admin != nil {
		c.admin.Close()
	}
	return nil
}

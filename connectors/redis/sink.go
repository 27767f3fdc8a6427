package redis

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// chunksPerRoundTrip is how many script calls a commit pipelines at once.
const chunksPerRoundTrip = 16

// checkpointWarning is how long the exactly-once sink holds records
// without a checkpoint before it warns that nothing is written.
var checkpointWarning = 10 * time.Minute

// commitScript adds the entries of one chunk of a transaction unless the
// chunk's marker exists, and sets the marker, atomically: a commit repeated
// after a restore adds nothing twice. The shebang (Redis 7) makes the
// server refuse the whole script when it is out of memory or read-only,
// rather than fail part way through.
//
// KEYS[1] is the stream and KEYS[2] the marker; ARGV[1] is the marker's
// time to live in milliseconds, ARGV[2] the MAXLEN to trim to (0: none),
// ARGV[3] the field, and ARGV[4] and after the records.
var commitScript = goredis.NewScript(`#!lua
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'stream' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE the key ' .. KEYS[1] .. ' holds a ' .. t .. ', not a stream')
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
local n = 0
for i = 4, #ARGV do
  if ARGV[2] ~= '0' then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', ARGV[3], ARGV[i])
  else
    redis.call('XADD', KEYS[1], '*', ARGV[3], ARGV[i])
  end
  n = n + 1
end
return n
`)

// newSink returns the sink cfg describes: exactly-once (a
// TransactionalSink) or at-least-once.
func newSink[T any](cfg *config, newEncoder func() connector.Encoder[T]) connector.Sink[T] {
	if cfg.guarantee == exactlyOnce {
		return txSink[T]{connector.TwoPhase(func(ctx connector.WriterContext) (connector.TwoPhaseCommitter[T, redisTx], error) {
			return &committer[T]{cfg: cfg, ctx: ctx, enc: newEncoder(), now: time.Now, since: time.Now()}, nil
		}), cfg.changelogs}
	}
	return plainSink[T]{cfg: cfg, newEncoder: newEncoder}
}

// txSink is the exactly-once sink, with the changelog mode of its format.
type txSink[T any] struct {
	connector.TransactionalSink[T]
	mode changelog.Mode
}

// ChangelogMode says which changes the format writes.
func (s txSink[T]) ChangelogMode() changelog.Mode { return s.mode }

// redisTx is a transaction of the exactly-once sink: the records of one
// checkpoint interval of one subtask, added when the checkpoint completes,
// in chunks of 'sink.batch-size' records, chunk k with the marker key
// '<prefix><stream>:<ID>:<k>'.
type redisTx struct {
	ID   string   `json:"id"`
	Msgs [][]byte `json:"msgs"`
}

// committer is the TwoPhaseCommitter of the exactly-once sink.
//
// It writes only when checkpoints complete; in a job without checkpointing
// it holds every record until the input ends. The runtime does not tell a
// writer whether the job checkpoints, so the committer warns when it has
// held records without a checkpoint for checkpointWarning, and again every
// checkpointWarning after.
type committer[T any] struct {
	cfg    *config
	ctx    connector.WriterContext
	enc    connector.Encoder[T]
	buf    []byte
	cli    *goredis.Client
	now    func() time.Time
	since  time.Time // the last checkpoint's barrier, or the start
	warned time.Time // the last warning
}

func (c *committer[T]) Begin() (redisTx, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return redisTx{}, fmt.Errorf("redis %q: making a transaction id: %w", c.cfg.name, err)
	}
	return redisTx{ID: hex.EncodeToString(b[:])}, nil
}

func (c *committer[T]) Write(tx *redisTx, v T) error {
	b, err := c.enc.Encode(c.buf[:0], v)
	if err != nil {
		return fmt.Errorf("redis %q: encoding a record for stream %q: %w", c.cfg.name, c.cfg.stream, err)
	}
	c.buf = b
	tx.Msgs = append(tx.Msgs, bytes.Clone(b))
	if len(tx.Msgs)%256 == 1 {
		c.warnIfNoCheckpoint(len(tx.Msgs))
	}
	return nil
}

// warnIfNoCheckpoint logs a warning when the committer has held records
// without a checkpoint for checkpointWarning.
func (c *committer[T]) warnIfNoCheckpoint(held int) {
	now := c.now()
	if now.Sub(c.since) < checkpointWarning || now.Sub(c.warned) < checkpointWarning {
		return
	}
	c.warned = now
	c.ctx.Log().Warn(fmt.Sprintf("redis %q: 'sink.delivery-guarantee' = 'exactly-once' adds records only when a checkpoint completes, and no checkpoint has passed for %s: "+
		"the sink holds %d records of stream %q in memory and has added none of them; enable checkpointing (eddy.WithCheckpointing, or SET 'execution.checkpointing.interval' in SQL) "+
		"or set 'sink.delivery-guarantee' = 'at-least-once'", c.cfg.name, now.Sub(c.since).Round(time.Second), held, c.cfg.stream),
		"sink", c.ctx.SinkName(), "subtask", c.ctx.Subtask())
}

// PreCommit notes that a checkpoint's barrier passed.
func (c *committer[T]) PreCommit(*redisTx) error {
	c.since = c.now()
	return nil
}

// marker returns the marker key of chunk k of transaction tx.
func (c *committer[T]) marker(tx string, k int) string {
	return c.cfg.markerPrefix + c.cfg.stream + ":" + tx + ":" + strconv.Itoa(k)
}

// Commit adds the records of tx, chunk by chunk, each chunk with its
// marker in one script call; chunks whose marker exists were added by an
// earlier commit of tx and add nothing.
func (c *committer[T]) Commit(tx redisTx) error {
	if len(tx.Msgs) == 0 {
		return nil
	}
	if c.cli == nil {
		cli, err := c.cfg.client()
		if err != nil {
			return err
		}
		c.cli = cli
	}
	size := c.cfg.batchSize
	chunks := (len(tx.Msgs) + size - 1) / size
	for first := 0; first < chunks; first += chunksPerRoundTrip {
		last := min(first+chunksPerRoundTrip, chunks)
		if err := c.commitChunks(tx, first, last); err != nil {
			return err
		}
	}
	return nil
}

// commitChunks runs the script for chunks [first, last) of tx in one
// pipeline, loading the script into the server if it does not know it.
func (c *committer[T]) commitChunks(tx redisTx, first, last int) error {
	size := c.cfg.batchSize
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	for attempt := 0; ; attempt++ {
		cmds, err := c.cli.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for k := first; k < last; k++ {
				msgs := tx.Msgs[k*size : min((k+1)*size, len(tx.Msgs))]
				args := make([]any, 0, 3+len(msgs))
				args = append(args, c.cfg.markerTTL, c.cfg.maxLen, c.cfg.field)
				for _, m := range msgs {
					args = append(args, m)
				}
				commitScript.EvalSha(ctx, p, []string{c.cfg.stream, c.marker(tx.ID, k)}, args...)
			}
			return nil
		})
		if err == nil {
			skipped := 0
			for _, cmd := range cmds {
				if n, _ := cmd.(*goredis.Cmd).Int64(); n < 0 {
					skipped++
				}
			}
			if skipped > 0 {
				c.ctx.Log().Info("redis: a repeated commit found chunks of its transaction added already", "stream", c.cfg.stream, "transaction", tx.ID, "chunks", skipped)
			}
			return nil
		}
		if isNoScript(err) && attempt == 0 {
			if lerr := commitScript.Load(ctx, c.cli).Err(); lerr != nil {
				err = lerr
			} else {
				continue
			}
		}
		return c.commitErr(tx, err)
	}
}

func (c *committer[T]) commitErr(tx redisTx, err error) error {
	hint := ""
	if msg := err.Error(); strings.Contains(msg, "shebang") || strings.Contains(msg, "Error compiling script") || strings.Contains(msg, "unexpected symbol") {
		hint = "; the exactly-once sink needs Redis 7.0 or later (or set 'sink.delivery-guarantee' = 'at-least-once')"
	}
	return fmt.Errorf("redis %q: committing transaction %s (%d records) to stream %q on %s: %w%s", c.cfg.name, tx.ID, len(tx.Msgs), c.cfg.stream, c.cfg.server(), c.cfg.scrub(err), hint)
}

// Abort does nothing: nothing of a transaction is on the server before it
// commits.
func (c *committer[T]) Abort(redisTx) error { return nil }

// Recover does nothing, for the same reason.
func (c *committer[T]) Recover(pending, current []redisTx) error { return nil }

// Close closes the client.
func (c *committer[T]) Close() error {
	if c.cli != nil {
		return c.cli.Close()
	}
	return nil
}

// plainSink is the at-least-once sink.
type plainSink[T any] struct {
	cfg        *config
	newEncoder func() connector.Encoder[T]
}

// ChangelogMode says which changes the format writes.
func (s plainSink[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

func (s plainSink[T]) NewWriter(ctx connector.WriterContext) (connector.Writer[T], error) {
	return &writer[T]{cfg: s.cfg, ctx: ctx, enc: s.newEncoder()}, nil
}

// writer adds records as they come, 'sink.batch-size' entries per
// pipeline, and waits for the rest at every flush.
type writer[T any] struct {
	cfg  *config
	ctx  connector.WriterContext
	enc  connector.Encoder[T]
	buf  []byte
	cli  *goredis.Client
	pipe goredis.Pipeliner
	n    int
}

func (w *writer[T]) Write(records []T, _ []int64) error {
	if w.cli == nil {
		cli, err := w.cfg.client()
		if err != nil {
			return err
		}
		w.cli, w.pipe = cli, cli.Pipeline()
	}
	ctx := context.Background()
	for _, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("redis %q: encoding a record for stream %q: %w", w.cfg.name, w.cfg.stream, err)
		}
		w.buf = b
		w.pipe.XAdd(ctx, &goredis.XAddArgs{Stream: w.cfg.stream, MaxLen: w.cfg.maxLen, Approx: w.cfg.maxLen > 0, Values: []any{w.cfg.field, string(b)}})
		if w.n++; w.n >= w.cfg.batchSize {
			if err := w.exec(); err != nil {
				return err
			}
		}
	}
	return nil
}

// exec sends the pipelined entries and waits for the server to add them.
func (w *writer[T]) exec() error {
	if w.n == 0 {
		return nil
	}
	n := w.n
	w.n = 0
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if _, err := w.pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis %q: adding %d entries to stream %q on %s: %w", w.cfg.name, n, w.cfg.stream, w.cfg.server(), w.cfg.scrub(err))
	}
	return nil
}

// Flush waits until the server has added every entry written so far.
func (w *writer[T]) Flush() error { return w.exec() }

func (w *writer[T]) Close() error {
	if w.cli != nil {
		return w.cli.Close()
	}
	return nil
}

package redis

import (
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

// commitScript moves one chunk of a transaction's staged records into the
// stream unless the chunk's marker exists, and sets the marker, atomically:
// a commit repeated after a restore adds nothing twice. It returns the
// number of entries added, -1 if the marker existed, or -2 if the staged
// records are gone. The shebang (Redis 7) makes the server refuse the
// whole script when it is out of memory or read-only, rather than fail
// part way through.
//
// KEYS[1] is the stream, KEYS[2] the marker and KEYS[3] the staged
// records (a list); ARGV[1] is the marker's time to live in milliseconds,
// ARGV[2] the MAXLEN to trim to (0: none), ARGV[3] the field, and ARGV[4]
// and ARGV[5] the first and last index of the chunk in the list.
var commitScript = goredis.NewScript(`#!lua
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
local first, last = tonumber(ARGV[4]), tonumber(ARGV[5])
local recs = redis.call('LRANGE', KEYS[3], first, last)
if #recs ~= last - first + 1 then
  return -2
end
local t = redis.call('TYPE', KEYS[1])['ok']
if t ~= 'stream' and t ~= 'none' then
  return redis.error_reply('WRONGTYPE the key ' .. KEYS[1] .. ' holds a ' .. t .. ', not a stream')
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
for i = 1, #recs do
  if ARGV[2] ~= '0' then
    redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', ARGV[3], recs[i])
  else
    redis.call('XADD', KEYS[1], '*', ARGV[3], recs[i])
  end
end
return #recs
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
// checkpoint interval of one subtask, staged as they come in a list,
// '<prefix><stream>:<ID>:staged', and moved into the stream when the
// checkpoint completes, in chunks of Chunk records ('sink.batch-size' when
// the transaction began), chunk k with the marker key
// '<prefix><stream>:<ID>:<k>'. The chunk size travels with the
// transaction: a commit repeated by a job restored with another
// 'sink.batch-size' cuts the same chunks as the first, so the markers it
// finds stand for the records the first one added.
type redisTx struct {
	ID    string `json:"id"`
	N     int    `json:"n"`               // records staged
	Chunk int    `json:"chunk,omitempty"` // records per chunk (0: a checkpoint from before it was noted, 'sink.batch-size')
}

// chunkSize returns the number of records per chunk of tx.
func (c *committer[T]) chunkSize(tx redisTx) int {
	if tx.Chunk > 0 {
		return tx.Chunk
	}
	return c.cfg.batchSize
}

// committer is the TwoPhaseCommitter of the exactly-once sink.
//
// It makes records visible only when checkpoints complete; in a job
// without checkpointing it stages every record until the input ends. The
// runtime does not tell a writer whether the job checkpoints, so the
// committer warns when it has staged records without a checkpoint for
// checkpointWarning, and again every checkpointWarning after.
type committer[T any] struct {
	cfg    *config
	ctx    connector.WriterContext
	enc    connector.Encoder[T]
	cli    *goredis.Client
	data   []byte // records encoded and not yet staged, one after another
	ends   []int  // where each of them ends in data
	now    func() time.Time
	since  time.Time // the last checkpoint's barrier, or the start
	warned time.Time // the last warning
}

func (c *committer[T]) Begin() (redisTx, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return redisTx{}, fmt.Errorf("redis %q: making a transaction id: %w", c.cfg.name, err)
	}
	c.data, c.ends = c.data[:0], c.ends[:0]
	return redisTx{ID: hex.EncodeToString(b[:]), Chunk: c.cfg.batchSize}, nil
}

func (c *committer[T]) Write(tx *redisTx, v T) error {
	b, err := c.enc.Encode(c.data, v)
	if err != nil {
		return fmt.Errorf("redis %q: encoding a record for stream %q: %w", c.cfg.name, c.cfg.stream, err)
	}
	connector.CountBytesOut(c.ctx, len(b)-len(c.data))
	c.data = b
	c.ends = append(c.ends, len(b))
	if len(c.ends) >= c.cfg.batchSize {
		return c.stage(tx)
	}
	return nil
}

// staged returns the key of the list of tx's staged records.
func (c *committer[T]) staged(tx string) string {
	return c.cfg.markerPrefix + c.cfg.stream + ":" + tx + ":staged"
}

// marker returns the marker key of chunk k of transaction tx.
func (c *committer[T]) marker(tx string, k int) string {
	return c.cfg.markerPrefix + c.cfg.stream + ":" + tx + ":" + strconv.Itoa(k)
}

func (c *committer[T]) connect() error {
	if c.cli != nil {
		return nil
	}
	cli, err := c.cfg.client()
	if err != nil {
		return err
	}
	c.cli = cli
	return nil
}

// stage appends the encoded records to the transaction's list, which
// expires with the markers' time to live.
func (c *committer[T]) stage(tx *redisTx) error {
	if len(c.ends) == 0 {
		return nil
	}
	if err := c.connect(); err != nil {
		return err
	}
	args := make([]any, len(c.ends))
	start := 0
	for i, e := range c.ends {
		args[i] = c.data[start:e]
		start = e
	}
	key := c.staged(tx.ID)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	_, err := c.cli.Pipelined(ctx, func(p goredis.Pipeliner) error {
		p.RPush(ctx, key, args...)
		p.PExpire(ctx, key, time.Duration(c.cfg.markerTTL)*time.Millisecond)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis %q: staging %d records of transaction %s for stream %q on %s: %w", c.cfg.name, len(c.ends), tx.ID, c.cfg.stream, c.cfg.server(), c.cfg.scrub(err))
	}
	tx.N += len(c.ends)
	c.data, c.ends = c.data[:0], c.ends[:0]
	c.warnIfNoCheckpoint(tx.N)
	return nil
}

// warnIfNoCheckpoint logs a warning when the committer has staged records
// without a checkpoint for checkpointWarning.
func (c *committer[T]) warnIfNoCheckpoint(held int) {
	now := c.now()
	if now.Sub(c.since) < checkpointWarning || now.Sub(c.warned) < checkpointWarning {
		return
	}
	c.warned = now
	c.ctx.Log().Warn(fmt.Sprintf("redis %q: 'sink.delivery-guarantee' = 'exactly-once' adds records to the stream only when a checkpoint completes, and no checkpoint has passed for %s: "+
		"the sink has staged %d records for stream %q and added none of them; enable checkpointing (eddy.WithCheckpointing, or SET 'execution.checkpointing.interval' in SQL) "+
		"or set 'sink.delivery-guarantee' = 'at-least-once'", c.cfg.name, now.Sub(c.since).Round(time.Second), held, c.cfg.stream),
		"sink", c.ctx.SinkName(), "subtask", c.ctx.Subtask())
}

// PreCommit stages the records not staged yet: the transaction is then
// durable in the server, but not in the stream.
func (c *committer[T]) PreCommit(tx *redisTx) error {
	c.since = c.now()
	return c.stage(tx)
}

// Commit moves the staged records of tx into the stream, chunk by chunk,
// each chunk with its marker in one script call, then deletes the staged
// list; chunks whose marker exists were added by an earlier commit of tx
// and add nothing.
func (c *committer[T]) Commit(tx redisTx) error {
	if tx.N == 0 {
		return nil
	}
	if err := c.connect(); err != nil {
		return err
	}
	size := c.chunkSize(tx)
	chunks := (tx.N + size - 1) / size
	added, done, gone := 0, 0, 0
	for first := 0; first < chunks; first += chunksPerRoundTrip {
		res, err := c.commitChunks(tx, first, min(first+chunksPerRoundTrip, chunks))
		if err != nil {
			return err
		}
		for _, n := range res {
			switch {
			case n >= 0:
				added += int(n)
			case n == -1:
				done++
			default:
				gone++
			}
		}
	}
	log := c.ctx.Log()
	if gone > 0 {
		// The chunks' markers and staged records are both gone: the
		// transaction was committed longer ago than their time to live
		// (a restore from an old checkpoint or savepoint), or its staged
		// records expired before it could commit.
		log.Warn(fmt.Sprintf("redis %q: transaction %s of stream %q: %d of its %d chunks have neither a marker nor staged records, and were not added: they were added longer ago than 'sink.transaction.marker-ttl', or their staged records expired before the commit", c.cfg.name, tx.ID, c.cfg.stream, gone, chunks),
			"sink", c.ctx.SinkName())
	} else if done > 0 {
		log.Info("redis: a repeated commit found chunks of its transaction added already", "stream", c.cfg.stream, "transaction", tx.ID, "chunks", done, "added", added)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := c.cli.Unlink(ctx, c.staged(tx.ID)).Err(); err != nil {
		return c.commitErr(tx, err)
	}
	return nil
}

// commitChunks runs the script for chunks [first, last) of tx in one
// pipeline, loading the script into the server if it does not know it,
// and returns the scripts' results.
func (c *committer[T]) commitChunks(tx redisTx, first, last int) ([]int64, error) {
	size := c.chunkSize(tx)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	staged := c.staged(tx.ID)
	for attempt := 0; ; attempt++ {
		cmds, err := c.cli.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for k := first; k < last; k++ {
				commitScript.EvalSha(ctx, p, []string{c.cfg.stream, c.marker(tx.ID, k), staged},
					c.cfg.markerTTL, c.cfg.maxLen, c.cfg.field, k*size, min((k+1)*size, tx.N)-1)
			}
			return nil
		})
		if err == nil {
			out := make([]int64, len(cmds))
			for i, cmd := range cmds {
				out[i], _ = cmd.(*goredis.Cmd).Int64()
			}
			return out, nil
		}
		if isNoScript(err) && attempt == 0 {
			if lerr := commitScript.Load(ctx, c.cli).Err(); lerr != nil {
				err = lerr
			} else {
				continue
			}
		}
		return nil, c.commitErr(tx, err)
	}
}

func (c *committer[T]) commitErr(tx redisTx, err error) error {
	hint := ""
	if msg := err.Error(); strings.Contains(msg, "shebang") || strings.Contains(msg, "Error compiling script") || strings.Contains(msg, "unexpected symbol") {
		hint = "; the exactly-once sink needs Redis 7.0 or later (or set 'sink.delivery-guarantee' = 'at-least-once')"
	}
	return fmt.Errorf("redis %q: committing transaction %s (%d records) to stream %q on %s: %w%s", c.cfg.name, tx.ID, tx.N, c.cfg.stream, c.cfg.server(), c.cfg.scrub(err), hint)
}

// Abort deletes the staged records of a transaction that will never
// commit.
func (c *committer[T]) Abort(tx redisTx) error {
	c.data, c.ends = c.data[:0], c.ends[:0]
	if tx.N == 0 {
		return nil
	}
	if err := c.connect(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := c.cli.Unlink(ctx, c.staged(tx.ID)).Err(); err != nil {
		return fmt.Errorf("redis %q: deleting the staged records of transaction %s of stream %q on %s: %w", c.cfg.name, tx.ID, c.cfg.stream, c.cfg.server(), c.cfg.scrub(err))
	}
	return nil
}

// Recover does nothing: the staged records of transactions a failure cut
// short, which no checkpoint knows, expire with their time to live.
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
// pipeline, one pipeline on the wire while it fills the next, and waits for
// the rest at every flush.
type writer[T any] struct {
	cfg      *config
	ctx      connector.WriterContext
	enc      connector.Encoder[T]
	buf      []byte
	cli      *goredis.Client
	pipe     goredis.Pipeliner // the pipeline being filled
	spare    goredis.Pipeliner // the other one, sent or idle
	n        int               // entries in pipe
	inflight chan error        // the result of the pipeline sent, if any
}

func (w *writer[T]) Write(records []T, _ []int64) error {
	if w.cli == nil {
		cli, err := w.cfg.client()
		if err != nil {
			return err
		}
		w.cli, w.pipe, w.spare = cli, cli.Pipeline(), cli.Pipeline()
	}
	ctx := context.Background()
	for _, v := range records {
		b, err := w.enc.Encode(w.buf[:0], v)
		if err != nil {
			return fmt.Errorf("redis %q: encoding a record for stream %q: %w", w.cfg.name, w.cfg.stream, err)
		}
		w.buf = b
		connector.CountBytesOut(w.ctx, len(b))
		w.pipe.XAdd(ctx, &goredis.XAddArgs{Stream: w.cfg.stream, MaxLen: w.cfg.maxLen, Approx: w.cfg.maxLen > 0, Values: []any{w.cfg.field, string(b)}})
		if w.n++; w.n >= w.cfg.batchSize {
			if err := w.send(); err != nil {
				return err
			}
		}
	}
	return nil
}

// send waits for the pipeline on the wire, then sends the one filled.
func (w *writer[T]) send() error {
	if err := w.wait(); err != nil || w.n == 0 {
		return err
	}
	p, n := w.pipe, w.n
	w.pipe, w.spare, w.n = w.spare, p, 0
	ch := make(chan error, 1)
	w.inflight = ch
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		if _, err := p.Exec(ctx); err != nil {
			ch <- fmt.Errorf("redis %q: adding %d entries to stream %q on %s: %w", w.cfg.name, n, w.cfg.stream, w.cfg.server(), w.cfg.scrub(err))
			return
		}
		ch <- nil
	}()
	return nil
}

// wait waits for the pipeline on the wire, if any.
func (w *writer[T]) wait() error {
	if w.inflight == nil {
		return nil
	}
	err := <-w.inflight
	w.inflight = nil
	return err
}

// Flush waits until the server has added every entry written so far.
func (w *writer[T]) Flush() error {
	if err := w.send(); err != nil {
		return err
	}
	return w.wait()
}

// Close waits for the pipeline on the wire and closes the client.
func (w *writer[T]) Close() error {
	if w.cli == nil {
		return nil
	}
	_ = w.wait() // the job is ending or failing: the entries are replayed if need be
	return w.cli.Close()
}

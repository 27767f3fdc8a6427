package nats

import (
	"bytes"
	"context"
	"fmt"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// kvOperation is the header that marks a deletion in a bucket's stream, as
// the NATS clients write it (ADR-8).
const kvOperation = "KV-Operation"

// bucketSink writes a table into a bucket by key: an insertion or update
// puts the row's value (all its columns, in 'format') at its key, a
// deletion deletes the key. It declares the upsert mode, so the planner
// sends all changes of a key to one writer, in order. With
// 'at-least-once' (the default) every checkpoint waits for the bucket to
// acknowledge the writes; a restored job writes the changes since the
// checkpoint again, which leaves each key at its last value.
type bucketSink struct {
	cfg        *config
	bt         *bucketTable
	newEncoder func() connector.Encoder[connector.TableRecord]
}

func newBucketSink(c *config, ctx connector.Context) (any, error) {
	bt, err := c.newBucketTable(ctx)
	if err != nil {
		return nil, err
	}
	newEnc, err := connector.EncoderMaker[connector.TableRecord](ctx)
	if err != nil {
		return nil, err
	}
	return &bucketSink{cfg: c, bt: bt, newEncoder: newEnc}, nil
}

// ChangelogMode says that the sink applies upserts and deletions by key.
func (s *bucketSink) ChangelogMode() changelog.Mode { return changelog.Upsert }

// NewWriter returns the writer of one subtask; it connects at its first
// write.
func (s *bucketSink) NewWriter(ctx connector.WriterContext) (connector.Writer[connector.TableRecord], error) {
	return &bucketWriter{s: s, ctx: ctx, enc: s.newEncoder(), prefix: "$KV." + s.cfg.bucket + "."}, nil
}

// bucketWriter writes the changes of one subtask.
type bucketWriter struct {
	s      *bucketSink
	ctx    connector.WriterContext
	enc    connector.Encoder[connector.TableRecord]
	prefix string // of the subjects of the bucket's keys
	buf    []byte
	nc     *natsgo.Conn
	pub    *publisher // at-least-once
}

// open connects, checks that the bucket exists and is not a mirror, and
// makes the publisher of at-least-once writes.
func (w *bucketWriter) open() error {
	cfg := w.s.cfg
	what := fmt.Sprintf("writer %d of %s", w.ctx.Subtask(), w.ctx.SinkName())
	nc, _, kv, err := cfg.keyValue(what, w.ctx.Log())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	st, err := kv.Status(ctx)
	if err != nil {
		nc.Close()
		return fmt.Errorf("nats %q: reading the status of bucket %q: %w", cfg.name, cfg.bucket, err)
	}
	if s, ok := st.(*jetstream.KeyValueBucketStatus); ok && s.StreamInfo().Config.Mirror != nil {
		nc.Close()
		return fmt.Errorf("nats %q: bucket %q is a mirror of %q, which takes no writes of its own: write the bucket it mirrors", cfg.name, cfg.bucket, s.StreamInfo().Config.Mirror.Name)
	}
	w.nc = nc
	if cfg.guarantee == atLeastOnce {
		js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishTimeout))
		if err != nil {
			nc.Close()
			return fmt.Errorf("nats %q: %w", cfg.name, err)
		}
		w.pub = &publisher{cfg: cfg, stream: "KV_" + cfg.bucket, nc: nc, js: js}
	}
	return nil
}

// Write puts the values of insertions and updates at their keys and
// deletes the keys of deletions.
func (w *bucketWriter) Write(records []connector.TableRecord, _ []int64) error {
	if w.nc == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	cfg, bt := w.s.cfg, w.s.bt
	for _, r := range records {
		if r.Kind == changelog.UpdateBefore {
			continue // the +U that follows replaces the value
		}
		k, ok := renderKey(bt.keyT, r.Row, bt.keyCol)
		if !ok {
			return fmt.Errorf("nats %q: a row's key (column %s) is NULL; bucket %q has no NULL key", cfg.name, bt.table.Schema.Field(bt.keyCol).Name, cfg.bucket)
		}
		if !validKey(k) {
			return fmt.Errorf("nats %q: a row's key %q (column %s) is not a key of bucket %q: keys are letters, digits and -/_=. without leading, trailing or doubled dots", cfg.name, k, bt.table.Schema.Field(bt.keyCol).Name, cfg.bucket)
		}
		m := &natsgo.Msg{Subject: w.prefix + k}
		if r.Kind == changelog.Delete {
			m.Header = natsgo.Header{kvOperation: []string{"DEL"}}
		} else {
			b, err := w.enc.Encode(w.buf[:0], connector.TableRecord{Kind: changelog.Insert, Row: r.Row})
			if err != nil {
				return fmt.Errorf("nats %q: encoding the value of key %q of bucket %q: %w", cfg.name, k, cfg.bucket, err)
			}
			w.buf = b
			m.Data = bytes.Clone(b)
			connector.CountBytesOut(w.ctx, len(b))
		}
		if w.pub != nil {
			if err := w.pub.publishMsg(m, ""); err != nil {
				return err
			}
			continue
		}
		if err := w.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("nats %q: writing key %q of bucket %q: %w", cfg.name, k, cfg.bucket, err)
		}
	}
	return nil
}

// Flush waits for the bucket to acknowledge every write (at-least-once),
// or for the server to have received them.
func (w *bucketWriter) Flush() error {
	if w.pub != nil {
		return w.pub.wait()
	}
	if w.nc != nil {
		if err := w.nc.Flush(); err != nil {
			return fmt.Errorf("nats %q: flushing the writes of bucket %q: %w", w.s.cfg.name, w.s.cfg.bucket, err)
		}
	}
	return nil
}

// Close closes the connection.
func (w *bucketWriter) Close() error {
	if w.nc != nil {
		w.nc.Close()
	}
	return nil
}

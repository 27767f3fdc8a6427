package rabbitmq

import (
	"encoding/binary"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/eddystream/eddy/connector"
)

// How the source reads its queue, fixed on a job's first run and kept in
// the enumerator's state.
const (
	// readStream: one split reads the stream queue from its offset.
	readStream byte = 's'
	// readShared: every reader consumes the classic or quorum queue
	// through a split of its own, asked for when it has none.
	readShared byte = 'q'
	// readSingle: one split consumes the queue, deduplicating by
	// message-id.
	readSingle byte = 'x'
)

// The event an enumerator sends each reader when it starts: the way the
// source reads and whether the job takes checkpoints.
const eventVersion = 1

func encodeEvent(mode byte, checkpointing bool) []byte {
	b := []byte{eventVersion, mode, 0}
	if checkpointing {
		b[2] = 1
	}
	return b
}

// probeWait is how long the enumerator waits for a stream to deliver a
// message when it looks for where a first run starts.
var probeWait = 2 * time.Second

// enumerator assigns the source's splits: on a fresh start it finds out
// the queue's type (declaring and binding it if asked to) and makes the
// split of a stream or of a deduplicating consumer; readers of a shared
// queue ask for a split of their own.
type enumerator struct {
	ctx     connector.EnumeratorContext
	cfg     *config
	mode    byte
	next    uint64              // the number of the next queue split
	pending [][]connector.Split // splits not yet assigned, per subtask
}

const enumVersion = 1

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e := &enumerator{ctx: ctx, cfg: s.cfg, pending: make([][]connector.Split, ctx.Parallelism())}
	var splits []connector.Split
	if restored != nil {
		if len(restored) < 2 || restored[0] != enumVersion {
			return nil, fmt.Errorf("rabbitmq %q: the enumerator's state in the checkpoint is corrupt or of another source", s.cfg.name)
		}
		e.mode = restored[1]
		next, rest, err := readUvarint(restored[2:])
		if err != nil {
			return nil, fmt.Errorf("rabbitmq %q: the enumerator's state in the checkpoint is corrupt or of another source", s.cfg.name)
		}
		e.next = next
		if splits, err = connector.DecodeSplits(rest); err != nil {
			return nil, fmt.Errorf("rabbitmq %q: restoring the enumerator: %w", s.cfg.name, err)
		}
	} else {
		var err error
		if e.mode, splits, err = s.cfg.discover(ctx); err != nil {
			return nil, err
		}
		if e.mode == readSingle {
			e.next = 1
		}
	}
	for i, sp := range splits {
		e.pending[i%len(e.pending)] = append(e.pending[i%len(e.pending)], sp)
	}
	return e, nil
}

// AddReader assigns the reader its share of the splits not yet assigned
// and tells it how the source reads. A reader of a stream or of a
// deduplicating consumer gets no more splits.
func (e *enumerator) AddReader(subtask int) error {
	if len(e.pending[subtask]) > 0 {
		e.ctx.AssignSplits(subtask, e.pending[subtask]...)
		e.pending[subtask] = nil
	}
	if e.mode != readShared {
		e.ctx.SignalNoMoreSplits(subtask)
	}
	e.ctx.SendEvent(subtask, encodeEvent(e.mode, e.ctx.Checkpointing()))
	return nil
}

// HandleSplitRequest gives a reader of a shared queue a consumer of its
// own.
func (e *enumerator) HandleSplitRequest(subtask int) error {
	if e.mode != readShared {
		return nil
	}
	st := splitState{kind: queueSplit, queue: e.cfg.queue, num: e.next}
	e.next++
	e.ctx.AssignSplits(subtask, connector.Split{ID: st.id(), State: st.encode()})
	e.ctx.SignalNoMoreSplits(subtask)
	return nil
}

// HandleEvent rejects events: the readers send none.
func (e *enumerator) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("rabbitmq %q: unexpected event from reader %d", e.cfg.name, subtask)
}

// SnapshotState encodes the way the source reads, the next split number
// and the splits not yet assigned.
func (e *enumerator) SnapshotState(int64) ([]byte, error) {
	b := []byte{enumVersion, e.mode}
	b = binary.AppendUvarint(b, e.next)
	var all []connector.Split
	for _, l := range e.pending {
		all = append(all, l...)
	}
	return append(b, connector.EncodeSplits(all)...), nil
}

// Close does nothing: the enumerator holds no connection.
func (e *enumerator) Close() error { return nil }

// discover prepares the queue on a job's first run and returns how the
// source reads it, with its splits.
func (c *config) discover(ectx connector.EnumeratorContext) (byte, []connector.Split, error) {
	conn, err := c.dial("enumerator of "+ectx.SourceName(), ectx.Log())
	if err != nil {
		return 0, nil, err
	}
	defer closeConn(conn)
	if err := c.setupQueue(conn, ectx.Log()); err != nil {
		return 0, nil, err
	}
	isStream, err := c.isStream(conn)
	if err != nil {
		return 0, nil, err
	}
	if !isStream {
		if c.startSet {
			return 0, nil, optErr("scan.startup.mode", fmt.Sprintf("applies to stream queues, and queue %q is not one: it is read from its head; remove the startup options", c.queue))
		}
		if !c.dedup {
			return readShared, nil, nil
		}
		st := splitState{kind: queueSplit, queue: c.queue}
		return readSingle, []connector.Split{{ID: st.id(), State: st.encode()}}, nil
	}
	if c.dedup {
		return 0, nil, optErr("scan.deduplication", fmt.Sprintf("applies to classic and quorum queues, and queue %q is a stream queue, read exactly once from its offsets: remove the option", c.queue))
	}
	st := splitState{kind: streamSplit, queue: c.queue}
	switch c.startMode {
	case earliest:
		st.first = true
	case specific:
		st.next = c.startOffset
	case timestamp:
		t := time.UnixMilli(c.startTime)
		off, ok, err := c.probe(conn, t, false)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			st.next = off
			break
		}
		fallthrough // nothing stored at or after the time yet
	case latest:
		off, ok, err := c.probe(conn, "last", true)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			st.next = off + 1
		} else {
			st.first = true // the stream is empty: all it will hold is new
		}
	}
	return readStream, []connector.Split{{ID: st.id(), State: st.encode()}}, nil
}

// probe reads the stream from the offset specification at for up to
// probeWait, and returns the offset of the first message delivered, or,
// with last, of the last message delivered before the deliveries pause or
// probeWait ends: a stream that producers write to without a pause keeps
// delivering, and the job starts after the last message seen.
func (c *config) probe(conn *amqp.Connection, at any, last bool) (int64, bool, error) {
	ch, err := conn.Channel()
	if err != nil {
		return 0, false, fmt.Errorf("rabbitmq %q: opening a channel on %s: %w", c.name, c.broker(), err)
	}
	defer ch.Close()
	if err := ch.Qos(1000, 0, false); err != nil {
		return 0, false, fmt.Errorf("rabbitmq %q: setting the prefetch count on %s: %w", c.name, c.broker(), err)
	}
	deliveries, err := ch.Consume(c.queue, "eddy-probe-"+randomID(), false, false, false, false, amqp.Table{"x-stream-offset": at})
	if err != nil {
		return 0, false, fmt.Errorf("rabbitmq %q: reading stream %q from %v to find where to start: %w", c.name, c.queue, at, err)
	}
	var off int64
	found := false
	wait := time.NewTimer(probeWait)
	defer wait.Stop()
	deadline := time.Now().Add(probeWait)
	for {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return 0, false, fmt.Errorf("rabbitmq %q: the channel reading stream %q closed while looking for where to start", c.name, c.queue)
			}
			o, hasOffset := streamOffset(d)
			if !hasOffset {
				return 0, false, fmt.Errorf("rabbitmq %q: a message of stream %q has no x-stream-offset header", c.name, c.queue)
			}
			_ = d.Ack(false)
			if !last {
				return o, true, nil
			}
			off, found = max(off, o), true
			// The rest of the last chunk follows at once.
			wait.Reset(max(0, min(100*time.Millisecond, time.Until(deadline))))
		case <-wait.C:
			return off, found, nil
		}
	}
}

// streamOffset returns the stream offset of a delivery from a stream
// queue.
func streamOffset(d amqp.Delivery) (int64, bool) {
	switch v := d.Headers["x-stream-offset"].(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

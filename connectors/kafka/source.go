package kafka

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// Special offsets of a split's state.
const (
	fromStart = -2 // the partition's log start offset
	noStop    = -1 // an unbounded split
)

// source reads topics' partitions, one split per partition.
type source[T any] struct {
	cfg *config
	// newDecoder returns what turns one message into records.
	newDecoder func() func(rec *kgo.Record, emit func(T)) error
}

// ChangelogMode says what the source emits: insertions, the changes of a
// changelog format, or (upsert-kafka) an upsert changelog keyed by the
// table's primary key, which eddy's planner normalises.
func (s *source[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

// tp names a partition of a topic.
type tp struct {
	topic     string
	partition int32
}

func (p tp) id() string { return p.topic + "-" + strconv.Itoa(int(p.partition)) }

// splitState is a split's state: its partition, the offset of the next
// message to emit (fromStart before the first of a partition read from its
// start) and the offset reading stops at (noStop if none).
type splitState struct {
	tp
	next, stop int64
}

const stateVersion = 1

func (s splitState) encode() []byte {
	b := []byte{stateVersion}
	b = binary.AppendUvarint(b, uint64(len(s.topic)))
	b = append(b, s.topic...)
	b = binary.AppendVarint(b, int64(s.partition))
	b = binary.AppendVarint(b, s.next)
	return binary.AppendVarint(b, s.stop)
}

var errBadState = errors.New("split state is corrupt or of another source")

func decodeState(b []byte) (splitState, error) {
	var s splitState
	if len(b) < 1 || b[0] != stateVersion {
		return s, errBadState
	}
	b = b[1:]
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return s, errBadState
	}
	s.topic = string(b[n : n+int(l)])
	b = b[n+int(l):]
	var vals [3]int64
	for i := range vals {
		v, n := binary.Varint(b)
		if n <= 0 {
			return s, errBadState
		}
		vals[i], b = v, b[n:]
	}
	s.partition, s.next, s.stop = int32(vals[0]), vals[1], vals[2]
	return s, nil
}

func (s splitState) split() connector.Split { return connector.Split{ID: s.id(), State: s.encode()} }

// owner returns the subtask that reads a partition.
func owner(p tp, parallelism int) int {
	h := fnv.New32a()
	h.Write([]byte(p.topic))
	return int((uint64(h.Sum32()) + uint64(p.partition)) % uint64(parallelism))
}

func (s *source[T]) bounded() bool { return s.cfg.boundedMode != unbounded }

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	e := &enumerator[T]{src: s, ctx: ctx, known: map[tp]bool{}, pending: make([][]connector.Split, ctx.Parallelism()), readers: map[int]bool{}}
	if restored != nil {
		if err := e.restore(restored); err != nil {
			return nil, fmt.Errorf("%s %q: restoring the enumerator: %w", s.cfg.connector, s.cfg.name, err)
		}
	} else {
		parts, err := e.listPartitions(true)
		if err != nil {
			e.Close()
			return nil, err
		}
		splits, err := s.cfg.initialSplits(ctx, parts)
		if err != nil {
			e.Close()
			return nil, err
		}
		for _, st := range splits {
			e.add(st)
		}
	}
	if !s.bounded() && s.cfg.discovery > 0 {
		ctx.Every(s.cfg.discovery, e.discover)
	}
	return e, nil
}

// enumerator assigns each partition to the reader of a subtask and looks
// for new partitions while the job runs.
type enumerator[T any] struct {
	src      *source[T]
	ctx      connector.EnumeratorContext
	known    map[tp]bool
	pending  [][]connector.Split // per subtask, not yet assigned
	readers  map[int]bool
	cl       *kgo.Client
	inFlight bool
}

// add makes a split of a partition and assigns it, or keeps it until its
// reader starts.
func (e *enumerator[T]) add(st splitState) {
	e.known[st.tp] = true
	o := owner(st.tp, e.ctx.Parallelism())
	if e.readers[o] {
		e.ctx.AssignSplits(o, st.split())
		return
	}
	e.pending[o] = append(e.pending[o], st.split())
}

func (e *enumerator[T]) client() (*kgo.Client, error) {
	if e.cl == nil {
		cl, err := e.src.cfg.newClient(e.ctx.Log())
		if err != nil {
			return nil, err
		}
		e.cl = cl
	}
	return e.cl, nil
}

// listPartitions returns the partitions of the source's topics; first says
// whether a topic named in 'topic' that does not exist is an error.
func (e *enumerator[T]) listPartitions(first bool) ([]tp, error) {
	cl, err := e.client()
	if err != nil {
		return nil, err
	}
	return e.src.cfg.listPartitions(cl, first)
}

func (c *config) listPartitions(cl *kgo.Client, first bool) ([]tp, error) {
	req := kmsg.NewPtrMetadataRequest()
	if c.pattern == nil {
		for _, t := range c.topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("%s %q: listing the partitions of %s: %w", c.connector, c.name, c.topicsText(), err)
	}
	var out []tp
	for _, t := range resp.Topics {
		var name string
		if t.Topic != nil {
			name = *t.Topic
		}
		if c.pattern != nil && (t.IsInternal || !c.pattern.MatchString(name)) {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if first && c.pattern == nil {
				return nil, fmt.Errorf("%s %q: topic %q: %w; create it or correct 'topic'", c.connector, c.name, name, err)
			}
			continue
		}
		for _, p := range t.Partitions {
			out = append(out, tp{name, p.Partition})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out, nil
}

func (c *config) topicsText() string {
	if c.pattern != nil {
		return "the topics matching " + c.pattern.String()
	}
	return fmt.Sprintf("topics %q", c.topics)
}

// listOffsets returns the offsets of parts at ts: -2 the start, -1 the
// end, otherwise the first message at or after ts (the end if none).
func (c *config) listOffsets(cl *kgo.Client, parts []tp, ts int64) (map[tp]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if c.client.readCommit {
		req.IsolationLevel = 1
	}
	byTopic := map[string][]int32{}
	for _, p := range parts {
		byTopic[p.topic] = append(byTopic[p.topic], p.partition)
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = t
		for _, p := range byTopic[t] {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = p, ts, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("%s %q: listing offsets of %s: %w", c.connector, c.name, c.topicsText(), err)
	}
	out := map[tp]int64{}
	var missing []tp
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("%s %q: listing offsets of partition %d of %q: %w", c.connector, c.name, p.Partition, t.Topic, err)
			}
			if p.Offset < 0 {
				missing = append(missing, tp{t.Topic, p.Partition})
				continue
			}
			out[tp{t.Topic, p.Partition}] = p.Offset
		}
	}
	if len(missing) > 0 && ts >= 0 {
		ends, err := c.listOffsets(cl, missing, -1)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, ends)
	}
	return out, nil
}

// committedOffsets returns the offsets the consumer group committed for
// parts (absent for those it has not committed).
func (c *config) committedOffsets(cl *kgo.Client, parts []tp) (map[tp]int64, error) {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = c.client.groupID
	byTopic := map[string][]int32{}
	for _, p := range parts {
		byTopic[p.topic] = append(byTopic[p.topic], p.partition)
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		rt := kmsg.NewOffsetFetchRequestTopic()
		rt.Topic, rt.Partitions = t, byTopic[t]
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := ctxTimeout()
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[tp]int64{}, nil // a group that never committed
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: reading the offsets group %q committed: %w", c.connector, c.name, c.client.groupID, err)
	}
	out := map[tp]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("%s %q: reading the offset group %q committed for partition %d of %q: %w", c.connector, c.name, c.client.groupID, p.Partition, t.Topic, err)
			}
			if p.Offset >= 0 {
				out[tp{t.Topic, p.Partition}] = p.Offset
			}
		}
	}
	return out, nil
}

// initialSplits resolves where each partition starts and, for a bounded
// read, stops, on a job's first run.
func (c *config) initialSplits(ectx connector.EnumeratorContext, parts []tp) ([]splitState, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	cl, err := c.newClient(ectx.Log())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	starts := map[tp]int64{}
	switch c.startMode {
	case earliestOffset:
	case latestOffset:
		starts, err = c.listOffsets(cl, parts, -1)
	case timestampMode:
		starts, err = c.listOffsets(cl, parts, c.startTime)
	case specificOffsets:
		for _, p := range parts {
			if o, ok := c.startOffsets[p.partition]; ok {
				starts[p] = o
			}
		}
	case groupOffsets:
		if starts, err = c.committedOffsets(cl, parts); err == nil {
			var rest []tp
			for _, p := range parts {
				if _, ok := starts[p]; !ok {
					rest = append(rest, p)
				}
			}
			switch {
			case len(rest) == 0:
			case c.autoReset == "latest":
				var ends map[tp]int64
				if ends, err = c.listOffsets(cl, rest, -1); err == nil {
					maps.Copy(starts, ends)
				}
			case c.autoReset != "earliest":
				return nil, c.optErr("properties.auto.offset.reset", fmt.Sprintf("is not set, and group %q has committed no offset for partition %d of %q: set it to earliest or latest, or choose another 'scan.startup.mode'", c.client.groupID, rest[0].partition, rest[0].topic))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if c.boundedMode != unbounded && len(starts) < len(parts) {
		// A bounded split knows its first offset, so that an empty one ends.
		var firsts map[tp]int64
		if firsts, err = c.listOffsets(cl, parts, -2); err != nil {
			return nil, err
		}
		for p, o := range firsts {
			if _, ok := starts[p]; !ok {
				starts[p] = o
			}
		}
	}
	stops := map[tp]int64{}
	switch c.boundedMode {
	case latestOffset:
		stops, err = c.listOffsets(cl, parts, -1)
	case timestampMode:
		stops, err = c.listOffsets(cl, parts, c.boundedTime)
	case groupOffsets:
		stops, err = c.committedOffsets(cl, parts)
	case specificOffsets:
		var ends map[tp]int64
		if ends, err = c.listOffsets(cl, parts, -1); err == nil {
			for _, p := range parts {
				stops[p] = ends[p]
				if o, ok := c.boundedOffsets[p.partition]; ok {
					stops[p] = o
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]splitState, 0, len(parts))
	for _, p := range parts {
		st := splitState{tp: p, next: fromStart, stop: noStop}
		if o, ok := starts[p]; ok {
			st.next = o
		}
		if c.boundedMode != unbounded {
			st.stop = 0
			if o, ok := stops[p]; ok {
				st.stop = o
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// discover looks for new partitions, off the enumerator's goroutine.
func (e *enumerator[T]) discover() error {
	if e.inFlight {
		return nil
	}
	e.inFlight = true
	cl, err := e.client()
	if err != nil {
		e.inFlight = false
		e.ctx.Log().Warn("kafka: partition discovery", "error", err)
		return nil
	}
	e.ctx.CallAsync(func() (any, error) { return e.src.cfg.listPartitions(cl, false) }, func(res any, err error) error {
		e.inFlight = false
		if err != nil {
			e.ctx.Log().Warn("kafka: partition discovery", "error", err)
			return nil
		}
		for _, p := range res.([]tp) {
			if !e.known[p] {
				e.ctx.Log().Info("kafka: new partition", "topic", p.topic, "partition", p.partition)
				e.add(splitState{tp: p, next: fromStart, stop: noStop})
			}
		}
		return nil
	})
	return nil
}

func (e *enumerator[T]) AddReader(subtask int) error {
	e.readers[subtask] = true
	if len(e.pending[subtask]) > 0 {
		e.ctx.AssignSplits(subtask, e.pending[subtask]...)
		e.pending[subtask] = nil
	}
	if e.src.bounded() {
		e.ctx.SignalNoMoreSplits(subtask)
	}
	return nil
}

func (e *enumerator[T]) HandleSplitRequest(int) error { return nil }

func (e *enumerator[T]) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("%s %q: unexpected event from reader %d", e.src.cfg.connector, e.src.cfg.name, subtask)
}

// SnapshotState encodes the partitions known and the splits not assigned.
func (e *enumerator[T]) SnapshotState(int64) ([]byte, error) {
	b := []byte{stateVersion}
	known := slices.SortedFunc(maps.Keys(e.known), func(a, b tp) int {
		if a.topic != b.topic {
			if a.topic < b.topic {
				return -1
			}
			return 1
		}
		return int(a.partition - b.partition)
	})
	b = binary.AppendUvarint(b, uint64(len(known)))
	for _, p := range known {
		b = binary.AppendUvarint(b, uint64(len(p.topic)))
		b = append(b, p.topic...)
		b = binary.AppendVarint(b, int64(p.partition))
	}
	var all []connector.Split
	for _, l := range e.pending {
		all = append(all, l...)
	}
	return append(b, connector.EncodeSplits(all)...), nil
}

func (e *enumerator[T]) restore(b []byte) error {
	if len(b) < 1 || b[0] != stateVersion {
		return errBadState
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return errBadState
	}
	b = b[k:]
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return errBadState
		}
		topic := string(b[k : k+int(l)])
		b = b[k+int(l):]
		p, k2 := binary.Varint(b)
		if k2 <= 0 {
			return errBadState
		}
		b = b[k2:]
		e.known[tp{topic, int32(p)}] = true
	}
	splits, err := connector.DecodeSplits(b)
	if err != nil {
		return err
	}
	for _, s := range splits {
		st, err := decodeState(s.State)
		if err != nil {
			return err
		}
		e.add(st)
	}
	return nil
}

func (e *enumerator[T]) Close() error {
	if e.cl != nil {
		e.cl.Close()
	}
	return nil
}

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	r := &reader[T]{src: s, ctx: ctx, decode: s.newDecoder(), splits: map[tp]*readSplit{}, commits: map[int64]map[tp]int64{}, ids: map[string][16]byte{}}
	r.emit = func(v T) { r.cur.EmitAt(v, r.ts) }
	return r, nil
}

// readSplit is a split a reader holds.
type readSplit struct {
	st splitState
	// end is the partition's high watermark (its last stable offset when
	// reading committed records) as the last fetch that returned its
	// records told, -1 before one.
	end int64
}

// reader reads its partitions through one client, fetching each from the
// offset its split holds.
type reader[T any] struct {
	src     *source[T]
	ctx     connector.ReaderContext
	decode  func(rec *kgo.Record, emit func(T)) error
	cl      *kgo.Client
	splits  map[tp]*readSplit
	toAdd   []*readSplit
	commits map[int64]map[tp]int64 // offsets of checkpoints, for the group
	ids     map[string][16]byte    // topic ids, for committing offsets

	cur  connector.SplitOutput[T]
	ts   int64
	emit func(T)
}

func (r *reader[T]) AddSplits(splits []connector.Split) error {
	c := r.src.cfg
	for _, s := range splits {
		st, err := decodeState(s.State)
		if err != nil {
			return fmt.Errorf("%s %q: split %s: %w", c.connector, c.name, s.ID, err)
		}
		sp := &readSplit{st: st, end: -1}
		r.splits[st.tp] = sp
		r.toAdd = append(r.toAdd, sp)
	}
	return nil
}

// startSplits starts fetching the splits added since the last Read, and
// finishes those with nothing to read.
func (r *reader[T]) startSplits(out connector.Output[T]) error {
	parts := map[string]map[int32]kgo.Offset{}
	for _, sp := range r.toAdd {
		if sp.st.stop != noStop && sp.st.next >= sp.st.stop && sp.st.next != fromStart || sp.st.stop == 0 {
			r.finish(out, sp)
			continue
		}
		o := kgo.NewOffset().AtStart()
		if sp.st.next != fromStart {
			o = kgo.NewOffset().At(sp.st.next)
		}
		if parts[sp.st.topic] == nil {
			parts[sp.st.topic] = map[int32]kgo.Offset{}
		}
		parts[sp.st.topic][sp.st.partition] = o
	}
	r.toAdd = nil
	if len(parts) == 0 {
		return nil
	}
	if r.cl != nil {
		r.cl.AddConsumePartitions(parts)
		return nil
	}
	c := r.src.cfg
	opts := append([]kgo.Opt{kgo.ConsumePartitions(parts), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, c.client.consumeOpts...)
	if c.client.readCommit {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := c.newClient(r.ctx.Log(), opts...)
	if err != nil {
		return err
	}
	r.cl = cl
	return nil
}

// finish ends a split read to its stop offset.
func (r *reader[T]) finish(out connector.Output[T], sp *readSplit) {
	out.Split(sp.st.id()).Finish()
	delete(r.splits, sp.st.tp)
	if r.cl != nil {
		r.cl.RemoveConsumePartitions(map[string][]int32{sp.st.topic: {sp.st.partition}})
	}
}

func (r *reader[T]) Read(out connector.Output[T]) error {
	if len(r.toAdd) > 0 {
		if err := r.startSplits(out); err != nil {
			return err
		}
	}
	if r.cl == nil || len(r.splits) == 0 {
		if len(r.splits) == 0 {
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	fs := r.cl.PollRecords(ctx, max(out.Room(), 1))
	c := r.src.cfg
	for _, fe := range fs.Errors() {
		if errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled) {
			continue
		}
		if errors.Is(fe.Err, kgo.ErrClientClosed) {
			return nil
		}
		if fe.Topic == "" {
			r.ctx.Log().Warn("kafka: fetching", "error", fe.Err)
			continue
		}
		if kerr.IsRetriable(fe.Err) {
			r.ctx.Log().Warn("kafka: fetching", "topic", fe.Topic, "partition", fe.Partition, "error", fe.Err)
			continue
		}
		return fmt.Errorf("%s %q: reading partition %d of %q: %w", c.connector, c.name, fe.Partition, fe.Topic, fe.Err)
	}
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if sp := r.splits[tp{p.Topic, p.Partition}]; sp != nil && p.Err == nil {
			end := p.HighWatermark
			if c.client.readCommit {
				end = p.LastStableOffset
			}
			sp.end = max(sp.end, end)
		}
	})
	var err error
	fs.EachRecord(func(rec *kgo.Record) {
		if err != nil {
			return
		}
		err = r.handle(out, rec)
	})
	return err
}

// Status reports, per partition the reader reads (topic-partition), the
// offset of the next record to read ("offset", absent before the first
// record of a split starting at the partition's start), the partition's
// end as the last fetch told ("highWatermark": its high watermark, or its
// last stable offset when reading committed records) and the records
// between ("lagRecords"), and the sum of those (lagRecords).
func (r *reader[T]) Status() map[string]any {
	parts := make(map[string]any, len(r.splits))
	var lag int64
	for p, sp := range r.splits {
		ps := map[string]any{}
		if sp.st.next >= 0 {
			ps["offset"] = sp.st.next
		}
		if sp.end >= 0 {
			ps["highWatermark"] = sp.end
			if sp.st.next >= 0 {
				l := max(sp.end-sp.st.next, 0)
				ps["lagRecords"] = l
				lag += l
			}
		}
		parts[p.id()] = ps
	}
	return map[string]any{"partitions": parts, "lagRecords": lag}
}

// handle emits the records of one message.
func (r *reader[T]) handle(out connector.Output[T], rec *kgo.Record) error {
	sp := r.splits[tp{rec.Topic, rec.Partition}]
	if sp == nil || (sp.st.next != fromStart && rec.Offset < sp.st.next) {
		return nil // a finished split, or delivered again
	}
	if sp.st.stop != noStop && rec.Offset >= sp.st.stop {
		r.finish(out, sp)
		return nil
	}
	sp.st.next = rec.Offset + 1
	if !rec.Attrs.IsControl() {
		connector.CountBytesIn(r.ctx, len(rec.Value))
		r.cur = out.Split(sp.st.id())
		r.ts = rec.Timestamp.UnixMilli()
		if err := r.decode(rec, r.emit); err != nil {
			loc := fmt.Sprintf("topic %s partition %d offset %d", rec.Topic, rec.Partition, rec.Offset)
			if berr := out.BadRecord(connector.DeadLetter{Source: r.ctx.SourceName(), Location: loc, Raw: string(rec.Value), Error: err.Error()}); berr != nil {
				return berr
			}
		}
	}
	if sp.st.stop != noStop && sp.st.next >= sp.st.stop {
		r.finish(out, sp)
	}
	return nil
}

func (r *reader[T]) SnapshotState(id int64) ([]connector.Split, error) {
	out := make([]connector.Split, 0, len(r.splits))
	offsets := map[tp]int64{}
	for _, p := range slices.SortedFunc(maps.Keys(r.splits), func(a, b tp) int {
		if a.topic != b.topic {
			if a.topic < b.topic {
				return -1
			}
			return 1
		}
		return int(a.partition - b.partition)
	}) {
		sp := r.splits[p]
		out = append(out, sp.st.split())
		if sp.st.next >= 0 {
			offsets[p] = sp.st.next
		}
	}
	if r.src.cfg.client.groupID != "" && len(offsets) > 0 {
		r.commits[id] = offsets
	}
	return out, nil
}

// NotifyCheckpointComplete commits the offsets of the checkpoint to the
// consumer group, if there is one: for monitoring, as eddy resumes from its
// checkpoints. A failed commit is logged.
func (r *reader[T]) NotifyCheckpointComplete(id int64) error {
	offsets, ok := r.commits[id]
	for k := range r.commits {
		if k <= id {
			delete(r.commits, k)
		}
	}
	if !ok || r.cl == nil {
		return nil
	}
	c := r.src.cfg
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = c.client.groupID, -1
	byTopic := map[string][]kmsg.OffsetCommitRequestTopicPartition{}
	for p, o := range offsets {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p.partition, o, -1
		byTopic[p.topic] = append(byTopic[p.topic], rp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var missing []string
	for t := range byTopic {
		if _, ok := r.ids[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		ids, err := topicIDs(ctx, r.cl, missing)
		if err != nil {
			r.ctx.Log().Warn("kafka: committing offsets to the consumer group", "group", c.client.groupID, "checkpoint", id, "error", err)
			return nil
		}
		maps.Copy(r.ids, ids)
	}
	for t, ps := range byTopic {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID, rt.Partitions = t, r.ids[t], ps
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, r.cl)
	if err == nil {
	outer:
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err = kerr.ErrorForCode(p.ErrorCode); err != nil {
					break outer
				}
			}
		}
	}
	if err != nil {
		r.ctx.Log().Warn("kafka: committing offsets to the consumer group", "group", c.client.groupID, "checkpoint", id, "error", err)
	}
	return nil
}

func (r *reader[T]) Close() error {
	if r.cl != nil {
		r.cl.Close()
	}
	return nil
}

// topicIDs returns the ids of topics, which offset commits of recent
// protocol versions name topics by.
func topicIDs(ctx context.Context, cl *kgo.Client, topics []string) (map[string][16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("looking up the ids of topics %q: %w", topics, err)
	}
	out := map[string][16]byte{}
	for _, t := range resp.Topics {
		if t.Topic != nil && t.ErrorCode == 0 {
			out[*t.Topic] = t.TopicID
		}
	}
	return out, nil
}

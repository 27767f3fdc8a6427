package redis

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/eddystream/eddy/connector"
)

// floorInterval is how often, at most, the group enumerator recomputes the
// floor after a checkpoint completes.
var floorInterval = 200 * time.Millisecond

// groupEnumerator runs the consumer group of a source.
//
// The set of entries the job has consumed (emitted, or set aside as
// malformed) is, at every checkpoint, the entries up to a floor, the
// ranges of entries above it that the enumerator's state holds (consumed
// before the last restore), and the ranges each consumer's split state
// holds. The floor is what the group itself says once acknowledgements
// have happened: every entry up to the group's last delivered id, and
// before its first pending one, was acknowledged, and entries are
// acknowledged only after a completed checkpoint accounts for them.
//
// On a fresh start the enumerator creates or sets up the group and gives
// each reader a consumer. On a restore it waits for the readers to send the
// states of the consumers restored to them, then moves the group back to
// the highest floor of the checkpoint (XGROUP SETID), acknowledges every
// pending entry, and tells every reader to go, with the ranges above the
// floor that were consumed: those entries come again and are skipped, and
// every other entry after the floor is delivered and emitted once, whatever
// the group did after the checkpoint.
type groupEnumerator struct {
	cfg *config
	ctx connector.EnumeratorContext
	cli *goredis.Client

	floor     entryID
	skip      rangeSet
	pendingRd bool // fresh start: consumers read their pending entries first

	ready    bool                  // the group is set up
	expected map[string]bool       // restore: consumers whose states have not come
	restored map[string]groupState // restore: the states that came
	owner    map[string]int        // consumer → subtask holding it
	fresh    []string              // fresh start: the consumer of each subtask
	readers  map[int]bool          // subtasks whose readers started
	started  map[int]bool          // subtasks told to go

	floorBusy bool
	floorAt   time.Time
}

func newGroupEnumerator(cfg *config, ctx connector.EnumeratorContext, restored []byte) (*groupEnumerator, error) {
	e := &groupEnumerator{cfg: cfg, ctx: ctx, owner: map[string]int{}, readers: map[int]bool{}, started: map[int]bool{}}
	if restored != nil && stateKind(restored) == kindPlain {
		return nil, fmt.Errorf("redis %q: the checkpoint was taken reading stream %q without a consumer group; the source now has 'group' = %q: remove it, or start the job without restoring", cfg.name, cfg.stream, cfg.group)
	}
	var st enumState
	if restored != nil {
		if len(restored) == 0 {
			// A checkpoint without the enumerator's state: no consumer was
			// ever assigned, nothing was read.
			restored = nil
		} else {
			var err error
			if st, err = decodeEnum(restored); err != nil {
				return nil, fmt.Errorf("redis %q: restoring the enumerator: %w", cfg.name, err)
			}
			if st.stream != cfg.stream {
				return nil, fmt.Errorf("redis %q: the checkpoint was taken reading stream %q, not %q: restore it with its stream, or start the job without restoring", cfg.name, st.stream, cfg.stream)
			}
		}
	}
	cli, err := cfg.connect("the enumerator of " + ctx.SourceName())
	if err != nil {
		return nil, err
	}
	e.cli = cli
	if !ctx.Checkpointing() {
		// Readers acknowledge entries as they emit them: the floor rises
		// with time, not with checkpoints.
		ctx.Every(time.Second, func() error { return e.NotifyCheckpointComplete(0) })
	}
	if restored == nil {
		if err := e.setUp(); err != nil {
			cli.Close()
			return nil, err
		}
		return e, nil
	}
	e.floor, e.skip = st.floor, st.skip
	e.expected, e.restored = map[string]bool{}, map[string]groupState{}
	for _, c := range st.consumers {
		e.expected[c] = true
	}
	if len(e.expected) == 0 {
		if err := e.reset(); err != nil {
			cli.Close()
			return nil, err
		}
	}
	return e, nil
}

// group names the group and stream in messages.
func (e *groupEnumerator) group() string {
	return fmt.Sprintf("consumer group %q of stream %q on %s", e.cfg.group, e.cfg.stream, e.cfg.server())
}

func (e *groupEnumerator) fail(doing string, err error) error {
	return fmt.Errorf("redis %q: %s %s: %w", e.cfg.name, doing, e.group(), e.cfg.scrub(err))
}

// lastDelivered returns the group's last delivered id, or false if the
// group (or the stream) does not exist.
func (e *groupEnumerator) lastDelivered(ctx context.Context) (entryID, bool, error) {
	groups, err := e.cli.XInfoGroups(ctx, e.cfg.stream).Result()
	if err != nil {
		if err.Error() == "ERR no such key" {
			return entryID{}, false, nil
		}
		return entryID{}, false, err
	}
	for _, g := range groups {
		if g.Name == e.cfg.group {
			id, err := parseID(g.LastDeliveredID)
			return id, true, err
		}
	}
	return entryID{}, false, nil
}

// moveTo creates the group at pos, or moves it there.
func (e *groupEnumerator) moveTo(ctx context.Context, pos string) error {
	err := e.cli.XGroupSetID(ctx, e.cfg.stream, e.cfg.group, pos).Err()
	if isNoGroup(err) || (err != nil && err.Error() == "ERR no such key") {
		err = e.cli.XGroupCreateMkStream(ctx, e.cfg.stream, e.cfg.group, pos).Err()
	}
	return err
}

// ackPending acknowledges every pending entry of the group, and deletes
// the consumers of the prefix that keep is not the index of.
func (e *groupEnumerator) ackPending(ctx context.Context, keep map[string]bool) (int, error) {
	n := 0
	for {
		p, err := e.cli.XPendingExt(ctx, &goredis.XPendingExtArgs{Stream: e.cfg.stream, Group: e.cfg.group, Start: "-", End: "+", Count: 1000}).Result()
		if err != nil {
			return n, err
		}
		if len(p) == 0 {
			break
		}
		ids := make([]string, len(p))
		for i, x := range p {
			ids[i] = x.ID
		}
		if err := e.cli.XAck(ctx, e.cfg.stream, e.cfg.group, ids...).Err(); err != nil {
			return n, err
		}
		n += len(ids)
	}
	return n, e.dropConsumers(ctx, keep)
}

// dropConsumers deletes the consumers named '<prefix>-<n>' that are not
// in keep and have no pending entries.
func (e *groupEnumerator) dropConsumers(ctx context.Context, keep map[string]bool) error {
	cs, err := e.cli.XInfoConsumers(ctx, e.cfg.stream, e.cfg.group).Result()
	if err != nil {
		return err
	}
	ours := regexp.MustCompile(`^` + regexp.QuoteMeta(e.cfg.prefix) + `-[0-9]+$`)
	for _, c := range cs {
		if keep[c.Name] || c.Pending > 0 || !ours.MatchString(c.Name) {
			continue
		}
		if err := e.cli.XGroupDelConsumer(ctx, e.cfg.stream, e.cfg.group, c.Name).Err(); err != nil {
			return err
		}
	}
	return nil
}

// setUp sets up the group on a job's first run, as the startup mode says.
func (e *groupEnumerator) setUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), 4*requestTimeout)
	defer cancel()
	p := e.ctx.Parallelism()
	keep := map[string]bool{}
	for i := 0; i < p; i++ {
		name := e.cfg.prefix + "-" + strconv.Itoa(i)
		e.fresh = append(e.fresh, name)
		keep[name] = true
	}
	last, exists, err := e.lastDelivered(ctx)
	if err != nil {
		return e.fail("reading the state of", err)
	}
	log := e.ctx.Log()
	if e.cfg.startMode == groupOffsets {
		if !exists {
			if err := e.moveTo(ctx, "0"); err != nil {
				return e.fail("creating", err)
			}
			log.Info("redis: created the consumer group at the start of the stream", "group", e.cfg.group, "stream", e.cfg.stream)
			e.ready = true
			return nil
		}
		pending, err := e.claimPending(ctx)
		if err != nil {
			return e.fail("claiming the pending entries of", err)
		}
		if err := e.dropConsumers(ctx, keep); err != nil {
			return e.fail("deleting unused consumers of", err)
		}
		// Entries up to the last delivered one that are not pending were
		// acknowledged before the job started: they are not the job's.
		e.floor = last
		if len(pending) > 0 {
			e.floor = pending[0].prev()
			e.pendingRd = true
			var gaps rangeSet
			for i, id := range pending {
				hi := last
				if i+1 < len(pending) {
					hi = pending[i+1].prev()
				}
				if id.less(hi) {
					gaps = append(gaps, idRange{id.next(), hi})
				}
			}
			e.skip = gaps
		}
		log.Info("redis: reading the consumer group from where it is", "group", e.cfg.group, "stream", e.cfg.stream, "last-delivered", last.String(), "pending", len(pending))
		e.ready = true
		return nil
	}
	pos := e.cfg.startAfter().String()
	if e.cfg.startMode == latest {
		pos = "$"
	}
	if err := e.moveTo(ctx, pos); err != nil {
		return e.fail("setting up", err)
	}
	if e.floor, _, err = e.lastDelivered(ctx); err != nil {
		return e.fail("reading the state of", err)
	}
	if _, err := e.ackPending(ctx, keep); err != nil {
		return e.fail("acknowledging the pending entries of", err)
	}
	log.Info("redis: set the consumer group to the startup position", "group", e.cfg.group, "stream", e.cfg.stream, "mode", e.cfg.startMode, "after", e.floor.String())
	e.ready = true
	return nil
}

// claimPending makes every pending entry of the group pending for the
// job's consumers, dealt over them, and returns their ids in order.
func (e *groupEnumerator) claimPending(ctx context.Context) ([]entryID, error) {
	var ids []entryID
	start := "0-0"
	for i := 0; ; i++ {
		claimed, next, err := e.cli.XAutoClaimJustID(ctx, &goredis.XAutoClaimArgs{
			Stream: e.cfg.stream, Group: e.cfg.group, Consumer: e.fresh[i%len(e.fresh)], Start: start, Count: 1000}).Result()
		if err != nil {
			return nil, err
		}
		for _, s := range claimed {
			id, err := parseID(s)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if next == "0-0" || next == "" {
			break
		}
		start = next
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
	return ids, nil
}

// reset moves the group back to the restored checkpoint: to its highest
// floor, with the consumed ranges above it to skip, and nothing pending.
func (e *groupEnumerator) reset() error {
	floor, skip := e.floor, e.skip
	for _, st := range e.restored {
		if floor.less(st.floor) {
			floor = st.floor
		}
	}
	for _, st := range e.restored {
		skip = skip.union(st.ranges)
	}
	skip = skip.above(floor)
	ctx, cancel := context.WithTimeout(context.Background(), 4*requestTimeout)
	defer cancel()
	keep := map[string]bool{}
	for c := range e.owner {
		keep[c] = true
	}
	if err := e.moveTo(ctx, floor.String()); err != nil {
		return e.fail("moving back", err)
	}
	acked, err := e.ackPending(ctx, keep)
	if err != nil {
		return e.fail("acknowledging the pending entries of", err)
	}
	e.floor, e.skip, e.ready = floor, skip, true
	e.expected, e.restored = nil, nil
	e.ctx.Log().Info("redis: moved the consumer group back to the checkpoint", "group", e.cfg.group, "stream", e.cfg.stream,
		"after", floor.String(), "ranges-to-skip", len(skip), "acknowledged", acked)
	return nil
}

// AddReader gives the reader of subtask a consumer, once the group is
// ready, and tells it to go.
func (e *groupEnumerator) AddReader(subtask int) error {
	e.readers[subtask] = true
	if e.ready {
		e.start(subtask)
	}
	return nil
}

// start gives the reader of subtask a consumer if it holds none, and tells
// it to go.
func (e *groupEnumerator) start(subtask int) {
	if e.started[subtask] {
		return
	}
	e.started[subtask] = true
	holds := false
	for _, s := range e.owner {
		holds = holds || s == subtask
	}
	if !holds {
		name := ""
		var flags byte = flagFresh
		if subtask < len(e.fresh) {
			name = e.fresh[subtask]
			if e.pendingRd {
				flags |= flagReadPending
			}
		} else {
			for n := 0; ; n++ {
				name = e.cfg.prefix + "-" + strconv.Itoa(n)
				if _, used := e.owner[name]; !used {
					break
				}
			}
		}
		e.owner[name] = subtask
		st := groupState{stream: e.cfg.stream, flags: flags, floor: e.floor}
		e.ctx.AssignSplits(subtask, connector.Split{ID: name, State: st.encode()})
	}
	e.ctx.SendEvent(subtask, goEvent{floor: e.floor, skip: e.skip, autoAck: !e.ctx.Checkpointing()}.encode())
}

// HandleSplitRequest does nothing: readers get their consumers when they
// start.
func (e *groupEnumerator) HandleSplitRequest(int) error { return nil }

// HandleEvent takes the states of the consumers restored to a reader; once
// all have come, it resets the group and starts the readers.
func (e *groupEnumerator) HandleEvent(subtask int, event []byte) error {
	if len(event) == 0 || event[0] != eventRestored {
		return fmt.Errorf("redis %q: an unexpected event from reader %d", e.cfg.name, subtask)
	}
	splits, err := connector.DecodeSplits(event[1:])
	if err != nil {
		return fmt.Errorf("redis %q: an event from reader %d: %w", e.cfg.name, subtask, err)
	}
	if e.ready {
		return fmt.Errorf("redis %q: reader %d restored consumers %v the checkpoint's enumerator did not list", e.cfg.name, subtask, splitIDs(splits))
	}
	for _, s := range splits {
		st, err := decodeGroup(s.State)
		if err != nil {
			return fmt.Errorf("redis %q: consumer %s: %w", e.cfg.name, s.ID, err)
		}
		if st.stream != e.cfg.stream {
			return fmt.Errorf("redis %q: the checkpoint was taken reading stream %q, not %q: restore it with its stream, or start the job without restoring", e.cfg.name, st.stream, e.cfg.stream)
		}
		e.restored[s.ID] = st
		e.owner[s.ID] = subtask
		delete(e.expected, s.ID)
	}
	if len(e.expected) > 0 {
		return nil
	}
	if err := e.reset(); err != nil {
		return err
	}
	for _, s := range sortedSubtasks(e.readers) {
		e.start(s)
	}
	return nil
}

func splitIDs(splits []connector.Split) []string {
	out := make([]string, len(splits))
	for i, s := range splits {
		out[i] = s.ID
	}
	return out
}

func sortedSubtasks(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}

// SnapshotState records the floor, the ranges to skip and the consumers.
func (e *groupEnumerator) SnapshotState(int64) ([]byte, error) {
	st := enumState{stream: e.cfg.stream, group: e.cfg.group, floor: e.floor, skip: e.skip}
	if e.expected != nil {
		for c := range e.expected {
			st.consumers = append(st.consumers, c)
		}
		for c := range e.restored {
			st.consumers = append(st.consumers, c)
		}
	} else {
		for c := range e.owner {
			st.consumers = append(st.consumers, c)
		}
	}
	sort.Strings(st.consumers)
	return st.encode(), nil
}

// NotifyCheckpointComplete recomputes the floor, at most every
// floorInterval, once the group is ready.
//
// A floor is a fact about entries consumed before it was read, and
// readers get it only after they have taken their snapshots of the
// checkpoints the enumerator took before it (the runtime holds back an
// enumerator's events so): a checkpoint's enumerator state, and its
// readers' states, only ever hold floors below which every entry was
// consumed before the checkpoint.
func (e *groupEnumerator) NotifyCheckpointComplete(int64) error {
	if !e.ready || e.floorBusy || time.Since(e.floorAt) < floorInterval {
		return nil
	}
	e.floorBusy, e.floorAt = true, time.Now()
	e.ctx.CallAsync(e.readFloor, e.applyFloor)
	return nil
}

// readFloor asks the group for its floor: the entry before its first
// pending one, or its last delivered one if none is pending.
func (e *groupEnumerator) readFloor() (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var groups *goredis.XInfoGroupsCmd
	var pending *goredis.XPendingCmd
	_, err := e.cli.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		groups = p.XInfoGroups(ctx, e.cfg.stream)
		pending = p.XPending(ctx, e.cfg.stream, e.cfg.group)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var last string
	for _, g := range groups.Val() {
		if g.Name == e.cfg.group {
			last = g.LastDeliveredID
		}
	}
	floor, err := parseID(last)
	if err != nil {
		return nil, err
	}
	if p := pending.Val(); p.Count > 0 {
		first, err := parseID(p.Lower)
		if err != nil {
			return nil, err
		}
		if first.prev().less(floor) {
			floor = first.prev()
		}
	}
	return floor, nil
}

// applyFloor raises the floor and tells the readers.
func (e *groupEnumerator) applyFloor(res any, err error) error {
	e.floorBusy = false
	if err != nil {
		// The floor only bounds the state's size: try again later.
		e.ctx.Log().Warn("redis: reading the floor of the consumer group", "group", e.cfg.group, "stream", e.cfg.stream, "error", e.cfg.scrub(err))
		return nil
	}
	f := res.(entryID)
	if !e.floor.less(f) {
		return nil
	}
	e.floor, e.skip = f, e.skip.above(f)
	ev := encodeFloor(f)
	for _, s := range sortedSubtasks(e.started) {
		e.ctx.SendEvent(s, ev)
	}
	return nil
}

// Close closes the client.
func (e *groupEnumerator) Close() error {
	return e.cli.Close()
}

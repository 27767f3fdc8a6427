package mqtt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// source reads MQTT topics. Its splits are broker sessions: without a
// shared subscription group one per topic filter, with one one per
// parallel reader, each subscribing to every filter as a shared
// subscription. A split's state is its client id, its filters and whether
// its session was begun, so that a restored job resumes the same sessions,
// wherever the splits land.
type source[T any] struct {
	cfg        *config
	newDecoder func() messageDecoder[T]
}

// ChangelogMode says what the format yields: insertions, or the changes of
// a changelog format.
func (s *source[T]) ChangelogMode() changelog.Mode { return s.cfg.changelogs }

// splitState is the state of a split: a session.
type splitState struct {
	Version int      `json:"v"`
	Client  string   `json:"client"`
	Filters []string `json:"filters"`
	// Started says the session was begun: a split of 'new-session' that
	// was not begins its session anew when it first connects.
	Started bool `json:"started,omitempty"`
}

const stateVersion = 1

func (s splitState) split() connector.Split {
	b, _ := json.Marshal(s)
	return connector.Split{ID: s.Client, State: b}
}

func decodeState(sp connector.Split) (splitState, error) {
	var s splitState
	if err := json.Unmarshal(sp.State, &s); err != nil || s.Version != stateVersion || s.Client == "" || len(s.Filters) == 0 {
		return s, errors.New("split state is corrupt or of another source")
	}
	return s, nil
}

// sessions returns the splits of sessions from..to-1 of the source.
func (c *config) sessions(prefix string, from, to int) []connector.Split {
	var out []connector.Split
	for k := from; k < to; k++ {
		st := splitState{Version: stateVersion, Client: fmt.Sprintf("%s-%d", prefix, k)}
		if c.shareGroup != "" {
			for _, f := range c.topics {
				st.Filters = append(st.Filters, sharedFilter(c.shareGroup, f))
			}
		} else {
			st.Filters = []string{c.topics[k]}
		}
		out = append(out, st.split())
	}
	return out
}

func (s *source[T]) NewEnumerator(ctx connector.EnumeratorContext, restored []byte) (connector.Enumerator, error) {
	c := s.cfg
	p := ctx.Parallelism()
	e := &enumerator{ctx: ctx, pending: make([][]connector.Split, p)}
	prefix := c.clientPrefix(ctx.SourceName())
	var splits []connector.Split
	if restored == nil {
		e.made = len(c.topics)
		if c.shareGroup != "" {
			e.made = p
		}
		splits = c.sessions(prefix, 0, e.made)
	} else if len(restored) == 0 {
		e.made = p // a state without the enumerator's: its readers hold every split
	} else {
		var err error
		if e.made, splits, err = decodeEnumerator(restored); err != nil {
			return nil, fmt.Errorf("%s: restoring the enumerator of %s: %w", c.label(), ctx.SourceName(), err)
		}
		if c.shareGroup != "" && p > e.made {
			// More readers than sessions: each new reader gets a session
			// of its own, which the broker shares the messages with.
			splits = append(splits, c.sessions(prefix, e.made, p)...)
			e.made = p
		}
	}
	for i, sp := range splits {
		e.pending[i%p] = append(e.pending[i%p], sp)
	}
	return e, nil
}

// enumerator hands the sessions out round-robin when the readers start,
// and tells each reader whether the job takes checkpoints, which decides
// when it acknowledges messages.
type enumerator struct {
	ctx     connector.EnumeratorContext
	made    int // sessions made so far, the next one's number
	pending [][]connector.Split
}

// Events of the enumerator to its readers.
const (
	eventCheckpointing   = 1
	eventNoCheckpointing = 0
)

func (e *enumerator) AddReader(subtask int) error {
	ev := byte(eventNoCheckpointing)
	if e.ctx.Checkpointing() {
		ev = eventCheckpointing
	}
	e.ctx.SendEvent(subtask, []byte{ev})
	if len(e.pending[subtask]) > 0 {
		e.ctx.AssignSplits(subtask, e.pending[subtask]...)
		e.pending[subtask] = nil
	}
	e.ctx.SignalNoMoreSplits(subtask)
	return nil
}

func (e *enumerator) HandleSplitRequest(int) error { return nil }

func (e *enumerator) HandleEvent(subtask int, _ []byte) error {
	return fmt.Errorf("source %q: unexpected event from reader %d", e.ctx.SourceName(), subtask)
}

func (e *enumerator) SnapshotState(int64) ([]byte, error) {
	var all []connector.Split
	for _, l := range e.pending {
		all = append(all, l...)
	}
	b := binary.AppendUvarint([]byte{enumeratorVersion}, uint64(e.made))
	return append(b, connector.EncodeSplits(all)...), nil
}

func (e *enumerator) Close() error { return nil }

const enumeratorVersion = 1

func decodeEnumerator(b []byte) (int, []connector.Split, error) {
	bad := errors.New("enumerator state is corrupt or of another source")
	if len(b) < 1 || b[0] != enumeratorVersion {
		return 0, nil, bad
	}
	made, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, nil, bad
	}
	splits, err := connector.DecodeSplits(b[1+n:])
	if err != nil {
		return 0, nil, err
	}
	return int(made), splits, nil
}

func (s *source[T]) NewReader(ctx connector.ReaderContext) (connector.Reader[T], error) {
	return newReader(s, ctx), nil
}

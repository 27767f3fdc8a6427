package rabbitmq

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Kinds of split.
const (
	queueSplit  byte = 'q' // a consumer of a classic or quorum queue
	streamSplit byte = 's' // the reader of a stream queue
)

// splitState is a split and its position. A queue split is one consumer
// of a classic or quorum queue: it has no position (the broker keeps the
// messages not acknowledged), but with deduplication it holds the
// message-ids emitted and not known to be acknowledged. A stream split
// reads a stream queue from an offset.
type splitState struct {
	kind  byte
	queue string
	// queue splits
	num uint64   // the consumer's number, unique within the source
	ids []string // deduplication: message-ids emitted, not known acknowledged
	// stream splits
	first bool  // read from the first message the stream holds
	next  int64 // otherwise: the offset of the next message to emit
}

const stateVersion = 1

var errBadState = errors.New("split state is corrupt or of another source")

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func readString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return "", nil, errBadState
	}
	return string(b[n : n+int(l)]), b[n+int(l):], nil
}

func readUvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, errBadState
	}
	return v, b[n:], nil
}

func (s splitState) encode() []byte {
	b := []byte{stateVersion, s.kind}
	b = appendString(b, s.queue)
	switch s.kind {
	case queueSplit:
		b = binary.AppendUvarint(b, s.num)
		b = binary.AppendUvarint(b, uint64(len(s.ids)))
		for _, id := range s.ids {
			b = appendString(b, id)
		}
	case streamSplit:
		if s.first {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(s.next))
	}
	return b
}

func decodeState(b []byte) (splitState, error) {
	var s splitState
	if len(b) < 2 || b[0] != stateVersion || (b[1] != queueSplit && b[1] != streamSplit) {
		return s, errBadState
	}
	s.kind = b[1]
	var err error
	if s.queue, b, err = readString(b[2:]); err != nil {
		return s, err
	}
	if s.kind == streamSplit {
		if len(b) < 1 {
			return s, errBadState
		}
		s.first = b[0] == 1
		next, rest, err := readUvarint(b[1:])
		if err != nil || len(rest) != 0 {
			return s, errBadState
		}
		s.next = int64(next)
		return s, nil
	}
	if s.num, b, err = readUvarint(b); err != nil {
		return s, err
	}
	n, b, err := readUvarint(b)
	if err != nil || n > uint64(len(b)) {
		return s, errBadState
	}
	for i := uint64(0); i < n; i++ {
		var id string
		if id, b, err = readString(b); err != nil {
			return s, err
		}
		s.ids = append(s.ids, id)
	}
	if len(b) != 0 {
		return s, errBadState
	}
	return s, nil
}

// id names the split within its source.
func (s splitState) id() string {
	if s.kind == streamSplit {
		return "stream " + s.queue
	}
	return fmt.Sprintf("queue %s consumer %d", s.queue, s.num)
}

package nats

import (
	"strings"

	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/types"
)

// tableSource is the source of a table of messages. It takes conditions
// on the 'subject' metadata column that NATS evaluates itself
// (connector.FilterableSource): subject = 'orders.eu.paris' narrows the
// subscription (core NATS) or the consumer's filter (JetStream) to that
// subject.
type tableSource struct {
	*source[connector.TableRecord]
	subjectCol int // the index of the 'subject' column in the rows, or -1
}

// ApplyFilters accepts the equalities of the 'subject' metadata column
// (declared STRING or VARCHAR) with a literal subject, one without
// wildcards: NATS delivers the messages of exactly that subject to a
// subscription or consumer filter of it. The source returned reads that
// subject alone when one of the source's subjects (or, for a stream read
// whole, the stream) takes it, and reads nothing when none does or when
// the equalities name different subjects. Other predicates are left to
// the planner.
func (s *tableSource) ApplyFilters(preds []connector.Predicate) (connector.Source[connector.TableRecord], []int) {
	if s.subjectCol < 0 {
		return nil, nil
	}
	if s.table.RowType().FieldType(s.subjectCol).Kind() != types.KindVarChar {
		return nil, nil // CHAR(n) compares padded values
	}
	acc, want := connector.StringEqualities(preds, s.subjectCol, func(v string) bool { return checkSubject(v, false) == nil })
	if len(acc) == 0 {
		return nil, nil
	}
	n := *s.source
	n.narrowed, n.only = true, s.narrowTo(want)
	return &tableSource{source: &n, subjectCol: s.subjectCol}, acc
}

// narrowTo returns the one subject that every subject of want equals and
// that the source reads, or "" if there is none.
func (s *source[T]) narrowTo(want []string) string {
	x := want[0]
	for _, w := range want[1:] {
		if w != x {
			return ""
		}
	}
	if s.narrowed && s.only != x {
		return "" // narrowed before, to another subject or to nothing
	}
	if len(s.cfg.subjects) == 0 {
		return x // the whole stream: a filter outside its subjects matches nothing
	}
	for _, f := range s.cfg.subjects {
		if subjectMatches(f, x) {
			return x
		}
	}
	return ""
}

// subjectMatches says whether the filter (with wildcards) matches the
// literal subject: '*' matches one token, a trailing '>' one or more.
func subjectMatches(filter, subject string) bool {
	ft, st := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, f := range ft {
		if f == ">" {
			return len(st) > i
		}
		if i >= len(st) || (f != "*" && f != st[i]) {
			return false
		}
	}
	return len(ft) == len(st)
}

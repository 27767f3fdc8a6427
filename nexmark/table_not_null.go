package nexmark

import (
	"strings"

	"github.com/eddystream/eddy/connector"
)

// NotNull implements connector.NotNullSource. event_type and dateTime are
// set in every row. The person, auction and bid columns, and their fields,
// are never NULL in a source whose filters keep the events of that kind
// alone (ApplyFilters): every field of an event is set.
func (s *tableSource) NotNull(path []int) bool {
	if _, ok := connector.PathType(s.t.Schema, path); !ok || len(path) > 2 {
		return false
	}
	name := strings.ToLower(s.t.Schema.Field(path[0]).Name)
	if er, ok := eventRows[name]; ok {
		keep := s.tw.keep
		if keep == 0 {
			keep = allEvents
		}
		return keep&allEvents == 1<<er.kind
	}
	return len(path) == 1 && (name == "event_type" || name == "datetime")
}

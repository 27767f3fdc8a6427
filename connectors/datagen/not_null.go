package datagen

import "github.com/eddystream/eddy/sql/types"

// NotNull implements connector.NotNullSource: a column is never NULL
// unless its 'fields.#.null-rate' is above 0 (or its type is NULL). The
// fields of a ROW column are not reported.
func (s *Source) NotNull(path []int) bool {
	if len(path) != 1 || path[0] < 0 || path[0] >= len(s.cols) {
		return false
	}
	c := s.cols[path[0]]
	return c.nullRate <= 0 && c.t.Kind() != types.KindNull
}

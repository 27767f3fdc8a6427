package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/eddystream/eddy"
)

// DefaultParallelism returns the parallelism the script's jobs run with
// where no operator asks for its own: SET 'parallelism.default' if the
// script set it, else the Script's Parallelism, else 1 (eddy's default).
func (s *Script) DefaultParallelism() (int, error) {
	if v, ok := s.Cat.Settings["parallelism.default"]; ok {
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || p <= 0 {
			return 0, fmt.Errorf("SET 'parallelism.default' = '%s': want a positive integer such as '2'", v)
		}
		return p, nil
	}
	if s.Parallelism > 0 {
		return s.Parallelism, nil
	}
	return 1, nil
}

// parallelisms returns the number of parallel subtasks of every operator
// of the plans rooted at roots, as Build makes them: it builds the plans
// on a scratch environment with the script's default parallelism and reads
// the parallelism of each operator's stream. Most run with the default;
// those the engine pins run with theirs (VALUES, a FromSlice of changes,
// in one subtask) and per-row operators (a Calc, a filter) with their
// input's, chained to it. An operator the builder folds into the one above
// it (a Calc into a Calc, a scan narrowed by a projection) has no stream of
// its own and shows the parallelism of the operator it runs in.
func (s *Script) parallelisms(roots []Rel) (map[Rel]int, error) {
	def, err := s.DefaultParallelism()
	if err != nil {
		return nil, err
	}
	b := newBuilder(eddy.NewEnvironment(eddy.WithParallelism(def)), s.Cat)
	b.countReads(roots)
	for _, r := range roots {
		if _, err := b.stream(r); err != nil {
			return nil, err
		}
	}
	out := map[Rel]int{}
	var walk func(r Rel, above int)
	walk = func(r Rel, above int) {
		n := above
		if st, ok := b.lookup(r); ok {
			n = st.Subtasks()
		}
		if sk, ok := r.(*SinkRel); ok && sk.materialized() {
			// eddy.WriteUpserts keys the changes by the sink's key
			// into an UpsertMaterialize at the default parallelism,
			// which the sink then takes.
			n = def
		}
		out[r] = n
		for _, in := range r.Inputs() {
			walk(in, n)
		}
	}
	for _, r := range roots {
		walk(r, def)
	}
	return out, nil
}

// materialized says whether the sink writes through eddy.WriteUpserts'
// materializer, as planUpserts decided.
func (s *SinkRel) materialized() bool { return s.materialize }

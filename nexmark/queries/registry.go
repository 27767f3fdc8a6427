package queries

import (
	"errors"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
)

// SinkKind says where Query.Build sends a query's results.
type SinkKind int

const (
	// Blackhole discards the results, as the reference's blackhole
	// connector does; it is what the benchmark measures.
	Blackhole SinkKind = iota
	// Collect keeps the results in memory; Output.Results returns them.
	Collect
	// JSONLines writes the results to Options.Path, one JSON object a line.
	JSONLines
	// Files writes the results exactly once as JSON-lines part files into
	// the directory Options.Path (see eddy.WriteFiles).
	Files
)

// Options configures Query.Build.
type Options struct {
	// Sink is where the results go.
	Sink SinkKind
	// Path is the file JSONLines writes.
	Path string
	// Dir is the directory q10 writes its partitioned CSV files under. q10
	// needs it.
	Dir string
	// SideInput is the lookup file q13 reads (see WriteSideInput). q13 needs
	// it.
	SideInput string
}

// Output is a query added to an environment by Query.Build.
type Output struct {
	results func() []any
}

// Results returns the results a Collect sink has received so far (nil for
// the other sinks).
func (o *Output) Results() []any {
	if o == nil || o.results == nil {
		return nil
	}
	return o.results()
}

// Query is a Nexmark query of the registry.
type Query struct {
	// Name is the query's name: "q0" to "q22".
	Name string
	// Title is the reference's one-line title.
	Title string
	// Build adds the query to env, reading the events of cfg, with the sink
	// o asks for.
	Build func(env *eddy.Environment, cfg nexmark.Config, o Options) (*Output, error)
}

// attach adds the sink o asks for to s.
func attach[T any](s *eddy.Stream[T], o Options) (*Output, error) {
	switch o.Sink {
	case Blackhole:
		eddy.Discard(s)
		return &Output{}, nil
	case Collect:
		c := eddy.Collect(s)
		return &Output{results: func() []any {
			vs := c.Values()
			out := make([]any, len(vs))
			for i, v := range vs {
				out[i] = v
			}
			return out
		}}, nil
	case JSONLines:
		if o.Path == "" {
			return nil, errors.New("queries: the JSON-lines sink needs Options.Path")
		}
		eddy.WriteJSONLines(s, o.Path)
		return &Output{}, nil
	case Files:
		if o.Path == "" {
			return nil, errors.New("queries: the files sink needs Options.Path, a directory")
		}
		eddy.WriteFiles(s, o.Path)
		return &Output{}, nil
	}
	return nil, errors.New("queries: unknown sink kind")
}

// build returns a Build function for a query that needs only env and cfg.
func build[T any](q func(env *eddy.Environment, cfg nexmark.Config) *eddy.Stream[T]) func(*eddy.Environment, nexmark.Config, Options) (*Output, error) {
	return func(env *eddy.Environment, cfg nexmark.Config, o Options) (*Output, error) {
		return attach(q(env, cfg), o)
	}
}

// All is every query, q0 to q22, in order.
var All = []Query{
	{Name: "q0", Title: "pass-through", Build: build(Q0)},
	{Name: "q1", Title: "currency conversion", Build: build(Q1)},
	{Name: "q2", Title: "selection", Build: build(Q2)},
	{Name: "q3", Title: "local item suggestion", Build: build(Q3)},
	{Name: "q4", Title: "average price for a category", Build: build(Q4)},
	{Name: "q5", Title: "hot items", Build: build(Q5)},
	{Name: "q6", Title: "average selling price by seller", Build: build(Q6)},
	{Name: "q7", Title: "highest bid", Build: build(Q7)},
	{Name: "q8", Title: "monitor new users", Build: build(Q8)},
	{Name: "q9", Title: "winning bids", Build: build(Q9)},
	{Name: "q10", Title: "log to file system", Build: buildQ10},
	{Name: "q11", Title: "user sessions", Build: build(Q11)},
	{Name: "q12", Title: "processing time windows", Build: build(Q12)},
	{Name: "q13", Title: "bounded side input join", Build: buildQ13},
	{Name: "q14", Title: "calculation", Build: build(Q14)},
	{Name: "q15", Title: "bidding statistics report", Build: build(Q15)},
	{Name: "q16", Title: "channel statistics report", Build: build(Q16)},
	{Name: "q17", Title: "auction statistics report", Build: build(Q17)},
	{Name: "q18", Title: "find last bid", Build: build(Q18)},
	{Name: "q19", Title: "auction top-10 price", Build: build(Q19)},
	{Name: "q20", Title: "expand bid with auction", Build: build(Q20)},
	{Name: "q21", Title: "add channel id", Build: build(Q21)},
	{Name: "q22", Title: "get URL directories", Build: build(Q22)},
}

// Lookup returns the query called name, or false.
func Lookup(name string) (Query, bool) {
	for _, q := range All {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

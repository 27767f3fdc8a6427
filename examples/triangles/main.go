// Command triangles estimates the number of triangles of a graph given as a
// stream of edges, with TRIÈST (De Stefani et al., KDD 2016) on eddy, and
// prints the global estimate and the vertices with the largest local
// estimates as the stream goes by.
//
//	go run ./examples/triangles -file edges.txt -m 10000 -variant impr -every 100000 -top 5
//
// The file holds one edge a line: "u v" inserts the undirected edge {u, v}
// (vertex ids are unsigned integers, separated by spaces or tabs), and a
// fully dynamic stream writes "+ u v" for an insertion and "- u v" for a
// deletion. Blank lines and lines whose first field starts with # are
// skipped. The file is read with eddy.ReadCSV (space-separated), so a line
// with a double quote inside a field is malformed too. Malformed lines,
// and deletions when the variant is not fd, go to the source's dead letters
// and are reported at the end; the job carries on without them.
//
// Variants (flag -variant): base is TRIEST-BASE (reservoir sample of M
// edges), impr is TRIEST-IMPR (the same sample, but counters are updated for
// every edge with a weight, which lowers the variance; the default), and fd
// is TRIEST-FD, the fully dynamic variant with random pairing, the only one
// that accepts deletions. While the stream has at most M edges (-m), every
// variant is exact.
//
// TRIEST is a single global estimator: its sample is one reservoir over the
// whole edge stream, a triangle is found only when its three edges meet in
// that one sample, and two samples do not merge. So the job cannot
// partition the edges by key and count in parallel; it sends every edge to
// one subtask (keyed by a constant, parallelism 1), where a keyed process
// function keeps the estimator in keyed state with sketch.BinaryCodec, so
// that it is checkpointed and restored with the job. Parsing and the
// source may still run in parallel. The function reports after every -every
// edges and, when the input ends, from an event-time timer at the end of
// time.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sketch"
	"github.com/eddystream/eddy/state"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.File, "file", "", "edge file (required): `u v` lines, or `+ u v` / `- u v` for a fully dynamic stream")
	flag.IntVar(&cfg.M, "m", 10000, "edge budget M: the most edges TRIEST keeps (at least 6)")
	flag.StringVar(&cfg.Variant, "variant", "impr", "TRIEST variant: base, impr or fd (fd accepts deletions)")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "random seed of the edge sample")
	flag.IntVar(&cfg.Every, "every", 10000, "print the estimates every N edges (0: only at the end)")
	flag.IntVar(&cfg.Top, "top", 5, "how many vertices with the largest local estimates to print")
	flag.Parse()
	if _, err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "triangles:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	File    string // the edge file
	M       int    // the edge budget
	Variant string // base, impr or fd
	Seed    uint64 // the sample's seed
	Every   int    // report every so many edges; 0 only at the end
	Top     int    // how many local estimates to report
}

func (c config) validate() error {
	switch {
	case c.File == "":
		return errors.New("-file is required")
	case c.M < 6:
		return fmt.Errorf("-m %d: the edge budget must be at least 6", c.M)
	case c.Variant != "base" && c.Variant != "impr" && c.Variant != "fd":
		return fmt.Errorf("-variant %q: want base, impr or fd", c.Variant)
	case c.Every < 0:
		return fmt.Errorf("-every %d: must not be negative", c.Every)
	case c.Top < 0:
		return fmt.Errorf("-top %d: must not be negative", c.Top)
	}
	return nil
}

// edge is one element of the stream: the insertion or deletion of {U, V}.
// Comment lines parse to an edge with Skip set, which is filtered out.
type edge struct {
	Del  bool
	U, V uint64
	Skip bool
}

// parseEdge turns the space-separated fields of a line into an edge.
// Deletions are accepted only if dynamic is set.
func parseEdge(dynamic bool) func(fields []string) (edge, error) {
	return func(fields []string) (edge, error) {
		var toks []string
		for _, f := range fields {
			toks = append(toks, strings.Fields(f)...) // tabs, repeated spaces
		}
		if len(toks) == 0 || strings.HasPrefix(toks[0], "#") {
			return edge{Skip: true}, nil
		}
		var e edge
		switch {
		case len(toks) == 3 && toks[0] == "+":
			toks = toks[1:]
		case len(toks) == 3 && toks[0] == "-":
			if !dynamic {
				return e, errors.New("a deletion needs -variant fd")
			}
			e.Del, toks = true, toks[1:]
		case len(toks) != 2:
			return e, fmt.Errorf("want \"u v\", \"+ u v\" or \"- u v\", got %d fields", len(toks))
		}
		var err error
		if e.U, err = strconv.ParseUint(toks[0], 10, 64); err != nil {
			return e, fmt.Errorf("vertex %q: not an unsigned integer", toks[0])
		}
		if e.V, err = strconv.ParseUint(toks[1], 10, 64); err != nil {
			return e, fmt.Errorf("vertex %q: not an unsigned integer", toks[1])
		}
		return e, nil
	}
}

// Report is the state of the estimate after Edges stream elements.
type Report struct {
	Edges  int64                   // stream elements processed (insertions and deletions)
	Global float64                 // estimated number of triangles
	Top    []sketch.VertexEstimate // the largest local estimates, largest first
	Final  bool                    // whether the input has ended
}

// String renders the report as the command prints it.
func (r Report) String() string {
	var b strings.Builder
	if r.Final {
		b.WriteString("final: ")
	}
	fmt.Fprintf(&b, "after %d edges: %.1f triangles", r.Edges, r.Global)
	if len(r.Top) > 0 {
		b.WriteString("; top local:")
		for _, v := range r.Top {
			fmt.Fprintf(&b, " %d (%.1f)", v.Vertex, v.Estimate)
		}
	}
	return b.String()
}

// Result is what a run returns: the final report and the malformed lines.
type Result struct {
	Final       Report
	DeadLetters []connector.DeadLetter
}

// run executes the job on cfg, writing the reports to out as they come and
// the malformed lines at the end.
func run(ctx context.Context, cfg config, out io.Writer) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	env := eddy.NewEnvironment()
	src := eddy.ReadCSV(env, parseEdge(cfg.Variant == "fd"), eddy.CSVOptions[edge]{
		FileOptions: eddy.FileOptions[edge]{Watermarks: eddy.NoWatermarks[edge](), OnBadRecord: eddy.DeadLetterBadRecords},
		Comma:       ' ',
	}, cfg.File)
	bad := eddy.Collect(eddy.DeadLetters(src))
	edges := eddy.Filter(src, func(e edge) bool { return !e.Skip })
	all := eddy.KeyBy(edges, func(edge) struct{} { return struct{}{} })
	var reports *eddy.Stream[Report]
	switch cfg.Variant {
	case "base":
		reports = estimate(all, cfg, func() *sketch.TriestBase { return sketch.NewTriestBase(cfg.M, cfg.Seed) })
	case "impr":
		reports = estimate(all, cfg, func() *sketch.TriestImpr { return sketch.NewTriestImpr(cfg.M, cfg.Seed) })
	default:
		reports = estimate(all, cfg, func() *sketch.TriestFD { return sketch.NewTriestFD(cfg.M, cfg.Seed) })
	}
	final := Report{Final: true}
	seen := false
	eddy.SinkTo(reports, func(r Report) error {
		if r.Final {
			final, seen = r, true
		}
		_, err := fmt.Fprintln(out, r)
		return err
	})
	if err := env.Execute(ctx, "triangles"); err != nil {
		return Result{}, err
	}
	if !seen { // no edges at all
		fmt.Fprintln(out, final)
	}
	res := Result{Final: final, DeadLetters: bad.Values()}
	if n := len(res.DeadLetters); n > 0 {
		fmt.Fprintf(out, "%d malformed lines set aside:\n", n)
		for _, d := range res.DeadLetters {
			fmt.Fprintf(out, "  %s: %s: %q\n", d.Location, d.Error, d.Raw)
		}
	}
	return res, nil
}

// triest is what the job needs of a TRIEST estimator T through its pointer.
type triest[T any] interface {
	sketch.Binary[T]
	Add(u, v uint64)
	Global() float64
	TopLocal(k int) []sketch.VertexEstimate
}

// estimate runs the estimator newEst makes over the edges, in one subtask.
func estimate[T any, P triest[T]](edges *eddy.KeyedStream[struct{}, edge], cfg config, newEst func() P) *eddy.Stream[Report] {
	return eddy.ProcessKeyed(edges, func() eddy.KeyedProcessFunction[struct{}, edge, Report] {
		return &estimator[T, P]{cfg: cfg, newEst: newEst}
	}).Name("TRIEST " + cfg.Variant).Parallelism(1)
}

// estimator is the keyed process function holding the TRIEST estimator and
// the number of edges processed in keyed state.
type estimator[T any, P triest[T]] struct {
	cfg    config
	newEst func() P
	est    state.Value[P]
	edges  state.Value[int64]
}

// Open declares the state.
func (f *estimator[T, P]) Open(ctx *eddy.KeyedContext[struct{}, Report]) error {
	f.est = state.NewValue(ctx.Store(), state.ValueDescriptor[P]{Name: "triest", Codec: sketch.BinaryCodec[T, P]()})
	f.edges = state.NewValue(ctx.Store(), state.ValueDescriptor[int64]{Name: "edges"})
	return nil
}

// ProcessElement applies one edge and reports every cfg.Every edges.
func (f *estimator[T, P]) ProcessElement(ctx *eddy.KeyedContext[struct{}, Report], e edge) error {
	est, ok := f.est.Value()
	if !ok {
		est = f.newEst()
		ctx.RegisterEventTimeTimer(math.MaxInt64) // fires when the input ends
	}
	if e.Del {
		fd, ok := any(est).(interface{ Remove(u, v uint64) })
		if !ok {
			return fmt.Errorf("a deletion reached the %s variant", f.cfg.Variant) // parseEdge prevents it
		}
		fd.Remove(e.U, e.V)
	} else {
		est.Add(e.U, e.V)
	}
	f.est.Update(est)
	n, _ := f.edges.Value()
	n++
	f.edges.Update(n)
	if f.cfg.Every > 0 && n%int64(f.cfg.Every) == 0 {
		ctx.Emit(f.report(est, n, false))
	}
	return nil
}

// OnTimer reports the final estimates when the input has ended.
func (f *estimator[T, P]) OnTimer(ctx *eddy.KeyedContext[struct{}, Report], _ int64) error {
	est, ok := f.est.Value()
	if !ok {
		return nil
	}
	n, _ := f.edges.Value()
	ctx.Emit(f.report(est, n, true))
	return nil
}

func (f *estimator[T, P]) report(est P, n int64, final bool) Report {
	return Report{Edges: n, Global: est.Global(), Top: est.TopLocal(f.cfg.Top), Final: final}
}

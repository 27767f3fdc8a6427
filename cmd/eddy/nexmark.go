package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/nexmark"
	"github.com/eddystream/eddy/nexmark/queries"
)

// nexmarkOptions are the flags of `eddy nexmark`.
type nexmarkOptions struct {
	query        string
	events       int64
	tps          int64
	parallelism  int
	state        string
	memoryBudget int64
	output       string
	outputFile   string
	dir          string
	sideInput    string
	sqlDir       string
	// profileDir, when set, receives a CPU profile of every run.
	profileDir string
}

func newNexmarkCmd() *cobra.Command {
	o := nexmarkOptions{}
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Run the Nexmark benchmark queries on the built-in generator",
		Long: `Run Nexmark queries (q0 to q22, the Flink SQL suite written with eddy's Go API)
on events from the built-in generator, and report for each the events, the wall
time, the CPU cores the process used (user + system CPU time over wall time, as
the reference runner measures its TaskManagers), events/s and events/s per core.

--query takes a query (q5), a comma-separated list, "all", or "gen": the
generator alone, feeding every event into the engine and discarding it — the
ceiling of every query. Results go to a blackhole sink unless --output jsonl
writes them to --output-file; "rows" counts the records that reached the
blackhole sink. q10 writes CSV files under --dir (a temporary
directory, removed afterwards, by default); q13 reads its side input from
--side-input (written to a temporary file by default).

--sql-dir names a copy of the Nexmark reference's SQL files (the folder
nexmark-flink/src/main/resources/queries of github.com/nexmark/nexmark): each
query then runs a second time as its reference SQL file, variables substituted
as the reference's runner does, over the same events, and the table gives the
SQL run's events/s per core as a share of the Go API's.`,
		Example: `  eddy nexmark --query q5 --events 10000000 --parallelism 2
  eddy nexmark --query all --events 1000000 --tps 100000
  eddy nexmark --query q7 --events 100000 --output jsonl --output-file q7.jsonl
  eddy nexmark --query q0,q1,q2 --events 2000000 --parallelism 1 --sql-dir nexmark/nexmark-flink/src/main/resources/queries
  eddy nexmark generate --events 1000 --out events.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNexmark(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.query, "query", "all", `query to run: q0…q22, a comma-separated list, "all", or "gen" (the generator alone)`)
	f.Int64Var(&o.events, "events", 10_000_000, "number of events to generate per query")
	f.Int64Var(&o.tps, "tps", 10_000_000, "event rate in events per second of event time (sets event-time density, not speed)")
	f.IntVar(&o.parallelism, "parallelism", goruntime.NumCPU(), "parallel subtasks per operator")
	f.StringVar(&o.state, "state", "heap", `keyed state backend: "heap", or "pebble" (in a temporary directory)`)
	f.Int64Var(&o.memoryBudget, "memory-budget", 0, "with --state pebble, the bytes of block cache and memtables for the process (0: derived from the machine's memory)")
	f.StringVar(&o.output, "output", "blackhole", `where results go: "blackhole" or "jsonl"`)
	f.StringVar(&o.outputFile, "output-file", "", `file the jsonl output is written to; with several queries, the query's name is inserted before the extension`)
	f.StringVar(&o.dir, "dir", "", "directory q10 writes its files under (default: a temporary directory, removed afterwards)")
	f.StringVar(&o.sqlDir, "sql-dir", "", "also run each query as the Nexmark reference's SQL file in this directory (a copy of nexmark-flink/src/main/resources/queries), and compare")
	f.StringVar(&o.sideInput, "side-input", "", "q13's side input file of key,value rows (default: a temporary file of 10 000 rows)")
	f.StringVar(&o.profileDir, "cpuprofile-dir", "", "write a CPU profile of each run to this directory (QUERY.pprof, and QUERY-sql.pprof for the SQL run), for go tool pprof")
	cmd.AddCommand(newNexmarkGenerateCmd())
	return cmd
}

// nexmarkResult is the measurement of one query run.
type nexmarkResult struct {
	name   string
	events int64
	wall   time.Duration
	cpu    time.Duration
	// rows counts the records that reached blackhole sinks; -1 when
	// unknown.
	rows int64
	// of is, for a run of the reference's SQL, the run of the Go API's
	// version of its query.
	of *nexmarkResult
}

func (r nexmarkResult) cores() float64 { return r.cpu.Seconds() / r.wall.Seconds() }
func (r nexmarkResult) rate() float64  { return float64(r.events) / r.wall.Seconds() }
func (r nexmarkResult) perCore() float64 {
	if r.cpu <= 0 {
		return 0
	}
	return float64(r.events) / r.cpu.Seconds()
}

// selectQueries resolves --query.
func selectQueries(spec string) ([]string, error) {
	if spec == "all" {
		names := []string{"gen"}
		for _, q := range queries.All {
			names = append(names, q.Name)
		}
		return names, nil
	}
	var names []string
	for _, n := range strings.Split(spec, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if _, ok := queries.Lookup(n); !ok && n != "gen" {
			return nil, fmt.Errorf("unknown query %q; use q0…q22, gen or all", n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return nil, errors.New("--query names no query")
	}
	return names, nil
}

func runNexmark(ctx context.Context, stdout, stderr io.Writer, o nexmarkOptions) error {
	switch {
	case o.events <= 0:
		return fmt.Errorf("--events must be positive, got %d", o.events)
	case o.tps <= 0:
		return fmt.Errorf("--tps must be positive, got %d", o.tps)
	case checkParallelism(o.parallelism) != nil:
		return checkParallelism(o.parallelism)
	case o.state != "heap" && o.state != "pebble":
		return fmt.Errorf(`--state %q: the state backends are "heap" and "pebble"`, o.state)
	case o.output != "blackhole" && o.output != "jsonl":
		return fmt.Errorf(`--output must be "blackhole" or "jsonl", got %q`, o.output)
	case o.output == "jsonl" && o.outputFile == "":
		return errors.New("--output jsonl needs --output-file")
	}
	names, err := selectQueries(o.query)
	if err != nil {
		return err
	}
	cfg := nexmark.DefaultConfig()
	cfg.MaxEvents = o.events
	cfg.FirstEventRate = o.tps
	if err := cfg.Validate(); err != nil {
		return err
	}

	tmp, err := os.MkdirTemp("", "eddy-nexmark-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	opts := queries.Options{Sink: queries.Blackhole, Dir: o.dir, SideInput: o.sideInput}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(tmp, "q10")
	}
	if opts.SideInput == "" {
		opts.SideInput = filepath.Join(tmp, "side_input.txt")
		if err := queries.WriteSideInput(opts.SideInput, queries.SideInputRows); err != nil {
			return err
		}
	}

	fmt.Fprintf(stdout, "Nexmark: %d events, %d events/s of event time, parallelism %d, %s state, %d CPUs, GOMAXPROCS %d\n",
		o.events, o.tps, o.parallelism, o.state, goruntime.NumCPU(), goruntime.GOMAXPROCS(0))
	var results []nexmarkResult
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		qo := opts
		if o.output == "jsonl" {
			qo.Sink = queries.JSONLines
			qo.Path = o.outputFile
			if len(names) > 1 {
				ext := filepath.Ext(o.outputFile)
				qo.Path = strings.TrimSuffix(o.outputFile, ext) + "." + name + ext
			}
		}
		backend := eddy.HeapState()
		if o.state == "pebble" {
			backend = eddy.PebbleState(filepath.Join(tmp, "state-"+name), o.memoryBudget)
		}
		r, err := runNexmarkQuery(ctx, stderr, name, cfg, o.parallelism, qo, backend, o.profileDir)
		if err != nil {
			return err
		}
		runs := []nexmarkResult{r}
		if o.sqlDir != "" && name != "gen" {
			backend := eddy.HeapState()
			if o.state == "pebble" {
				backend = eddy.PebbleState(filepath.Join(tmp, "state-"+name+"-sql"), o.memoryBudget)
			}
			os.RemoveAll(filepath.Join(tmp, "q10"))
			s, err := runNexmarkSQL(ctx, name, o.sqlDir, tmp, o, backend)
			_, statErr := os.Stat(filepath.Join(o.sqlDir, name+".sql"))
			switch {
			case err != nil && (errors.Is(err, errSQLPlan) || errors.Is(statErr, fs.ErrNotExist)) && len(names) > 1:
				// The others still run: q6's file is refused, as by Flink,
				// and older copies of the reference have no q22.sql.
				fmt.Fprintf(stderr, "%s/sql does not run: %v\n", name, err)
			case err != nil:
				return err
			default:
				s.of = &runs[0]
				runs = append(runs, s)
			}
		}
		for _, r := range runs {
			results = append(results, r)
			if len(names) > 1 {
				fmt.Fprintf(stderr, "%-7s %6.2fs %5.2f cores %12s events/s %12s events/s/core\n",
					r.name, r.wall.Seconds(), r.cores(), humanRate(r.rate()), humanRate(r.perCore()))
			}
		}
		os.RemoveAll(filepath.Join(tmp, "q10"))
	}
	printNexmarkTable(stdout, results)
	return nil
}

// runNexmarkQuery runs one query and measures it.
func runNexmarkQuery(ctx context.Context, stderr io.Writer, name string, cfg nexmark.Config, parallelism int, o queries.Options, backend eddy.StateBackend, profileDir string) (nexmarkResult, error) {
	env := eddy.NewEnvironment(eddy.WithParallelism(parallelism), eddy.WithStateBackend(backend))
	if name == "gen" {
		eddy.Discard(queries.Generate(env, cfg))
	} else {
		q, _ := queries.Lookup(name)
		if _, err := q.Build(env, cfg, o); err != nil {
			return nexmarkResult{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	// Start every query from a clean heap, so that none pays for the
	// garbage of the one before.
	goruntime.GC()
	stopProfile, err := startCPUProfile(profileDir, name+".pprof")
	if err != nil {
		return nexmarkResult{}, err
	}
	stop := startProgress(stderr, name, cfg.MaxEvents)
	base := queries.GeneratedEvents()
	cpu0, wall0 := processCPU(), time.Now()
	err = env.Execute(ctx, "nexmark "+name)
	wall, cpu := time.Since(wall0), processCPU()-cpu0
	stop()
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return nexmarkResult{}, err
	}
	if n := queries.GeneratedEvents() - base; n != cfg.MaxEvents {
		return nexmarkResult{}, fmt.Errorf("%s: generated %d events, want %d", name, n, cfg.MaxEvents)
	}
	r := nexmarkResult{name: name, events: cfg.MaxEvents, wall: wall, cpu: cpu}
	for _, m := range env.Metrics() {
		if m.Name == "Sink: Discard" {
			r.rows += m.RecordsIn
		}
	}
	return r, nil
}

// processCPU returns the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func printNexmarkTable(w io.Writer, results []nexmarkResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	sqlRuns := false
	for _, r := range results {
		sqlRuns = sqlRuns || r.of != nil
	}
	head := "query\tevents\twall s\tcores\tevents/s\tevents/s/core\trows\t"
	if sqlRuns {
		head += "per core vs Go\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range results {
		rows := strconv.FormatInt(r.rows, 10)
		if r.rows < 0 {
			rows = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%s\t%s\t%s\t", r.name, r.events, r.wall.Seconds(), r.cores(),
			humanRate(r.rate()), humanRate(r.perCore()), rows)
		switch {
		case r.of != nil && r.of.perCore() > 0:
			fmt.Fprintf(tw, "%.0f%%\t", 100*r.perCore()/r.of.perCore())
		case sqlRuns:
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// humanRate formats a rate with a k or M suffix.
func humanRate(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + " M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

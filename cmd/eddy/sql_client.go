package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	_ "github.com/eddystream/eddy/connectors/all" // the built-in connectors and formats
	"github.com/eddystream/eddy/sql"
	"github.com/eddystream/eddy/sql/types"
)

// sqlClientConfig is what `eddy sql` gives the client.
type sqlClientConfig struct {
	in  io.Reader
	out io.Writer
	// signals carries os.Interrupt (stop the query shown, drop the
	// statement typed) and syscall.SIGTERM (quit).
	signals     <-chan os.Signal
	parallelism int
	refresh     time.Duration
	historyFile string
	// history keeps the history file even when the input is not a
	// terminal (--history-file was given).
	history bool
	// script is the -f file, "" when statements come from the input.
	script string
}

// sqlClient is the SQL client: one session whose statements run one at a
// time, the jobs they started, and the terminal.
type sqlClient struct {
	ctx     context.Context
	cancel  context.CancelFunc
	cfg     sqlClientConfig
	out     io.Writer
	session *sql.Session
	jobs    sqlJobs
	hist    *sqlHistory
	in      *sqlInput
	intr    chan os.Signal
	quit    chan struct{}

	// interactive is set when the input is a terminal: a prompt, no
	// echo, and errors that do not end the client. outTTY and inTTY say
	// whether the output and the input are terminals (the live views and
	// their keys).
	interactive, outTTY, inTTY bool
	outFD, inFD                uintptr

	// sink receives the changes of the query being built.
	sink func(rt *types.RowType) sql.QuerySink
	// failed counts the statements that failed, for the exit status of
	// a session read from a pipe.
	failed int
}

func fdOf(v any) (uintptr, bool) {
	f, ok := v.(*os.File)
	if !ok {
		return 0, false
	}
	return f.Fd(), isTTY(f.Fd())
}

func newSQLClient(ctx context.Context, cfg sqlClientConfig) (*sqlClient, error) {
	ctx, cancel := context.WithCancel(ctx)
	c := &sqlClient{ctx: ctx, cancel: cancel, cfg: cfg, out: cfg.out, intr: make(chan os.Signal, 1), quit: make(chan struct{})}
	c.outFD, c.outTTY = fdOf(cfg.out)
	c.inFD, c.inTTY = fdOf(cfg.in)
	c.interactive = c.inTTY && cfg.script == ""
	c.session = sql.NewSession(sql.WithParallelism(cfg.parallelism), sql.WithQueryOutput(func(_ int, rt *types.RowType) sql.QuerySink {
		if c.sink == nil {
			return func(changelog.Kind, types.Row) error { return nil }
		}
		return c.sink(rt)
	}))
	// Signals: SIGTERM quits, Ctrl-C goes to whoever waits (the prompt
	// or the query shown).
	go func() {
		for {
			select {
			case s := <-cfg.signals:
				if s == syscall.SIGTERM {
					c.cancel()
					close(c.quit)
					return
				}
				select {
				case c.intr <- s:
				default:
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	path := ""
	if cfg.script == "" && (c.inTTY || cfg.history) {
		path = cfg.historyFile
	}
	var err error
	c.hist, err = loadHistory(path)
	if err != nil {
		fmt.Fprintf(c.out, "[WARNING] %v\n", err)
	}
	if cfg.script == "" || c.inTTY {
		// With -f, the input is read only for the q of the result views.
		c.in = newSQLInput(cfg.in, c.intr, c.quit)
	}
	return c, nil
}

// close stops the jobs still running and ends the client.
func (c *sqlClient) close() {
	for _, j := range c.jobs.running() {
		j.stop()
	}
	c.cancel()
}

// padded returns the statement's text preceded by line breaks and spaces
// that put it where it was in its input, so that the session's errors
// give the input's lines and columns.
func padded(st sqlStatement) string {
	return strings.Repeat("\n", st.Line-1) + strings.Repeat(" ", st.Col-1) + st.Text
}

// echo prints a statement as if typed at the prompt.
func (c *sqlClient) echo(text string) {
	fmt.Fprintf(c.out, "eddy> %s;\n", strings.ReplaceAll(text, "\n", "\n    > "))
}

// printEnded prints what happened to background jobs since last time.
func (c *sqlClient) printEnded() {
	for _, m := range c.jobs.takeEnded() {
		fmt.Fprintln(c.out, m)
	}
}

// repl reads statements from the input and runs them until QUIT or the
// end of the input. An error is reported and the next statement read; read
// from a pipe, the session ends with an error if any statement failed,
// after the jobs it started have ended.
func (c *sqlClient) repl() error {
	if c.interactive {
		fmt.Fprintln(c.out, "eddy SQL client. Statements end with ';'. HELP lists the commands, QUIT ends.")
	}
	buf := ""
	for {
		if c.interactive {
			c.printEnded()
			if buf == "" {
				fmt.Fprint(c.out, "eddy> ")
			} else {
				fmt.Fprint(c.out, "    > ")
			}
		}
		line, err := c.in.readLine()
		switch {
		case errors.Is(err, errInterrupted):
			if !c.interactive {
				return fmt.Errorf("interrupted")
			}
			fmt.Fprintln(c.out)
			buf = ""
			continue
		case errors.Is(err, errQuit):
			return nil
		case err == io.EOF:
			if c.interactive {
				fmt.Fprintln(c.out)
			}
			if !blankSQL(buf) {
				_, rest := splitStatements(buf)
				if err := c.run(rest); err != nil {
					return c.endSession(err)
				}
			}
			return c.endSession(nil)
		case err != nil:
			return fmt.Errorf("reading statements: %w", err)
		}
		if buf == "" {
			if cmd := strings.TrimSuffix(strings.TrimSpace(line), ";"); cmd != "" && c.lineCommand(cmd) {
				if err := c.runLineCommand(cmd); err != nil {
					return c.endSession(err)
				}
				continue
			}
		}
		buf += line + "\n"
		stmts, rest := splitStatements(buf)
		for _, st := range stmts {
			if err := c.run(st); err != nil {
				return c.endSession(err)
			}
		}
		// What is left starts a new buffer, whose lines and columns the
		// errors of its statement count from.
		buf = rest.Text
		if blankSQL(buf) {
			buf = ""
		}
	}
}

// endSession ends a REPL session: err (errQuit for QUIT) or, read from a
// pipe, once the jobs it started have ended, an error if a statement or a
// job failed.
func (c *sqlClient) endSession(err error) error {
	if errors.Is(err, errQuit) {
		err = nil
	}
	if err != nil {
		return err
	}
	if c.interactive {
		if n := len(c.jobs.running()); n > 0 {
			fmt.Fprintf(c.out, "[INFO] Stopping %s of this session.\n", plural(int64(n), "running job"))
		}
		return nil
	}
	if err := c.waitJobs(); err != nil {
		return err
	}
	if c.failed > 0 {
		return fmt.Errorf("%s failed", plural(int64(c.failed), "statement"))
	}
	return nil
}

// waitJobs waits for the background jobs to end (Ctrl-C stops them),
// says how each ended, and returns an error if one failed.
func (c *sqlClient) waitJobs() error {
	jobs := c.jobs.background()
	if len(jobs) == 0 {
		return nil
	}
	fmt.Fprintln(c.out, "[INFO] Waiting for the jobs of the session to end (Ctrl-C stops them).")
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-c.intr:
		case <-c.quit:
		}
		select {
		case <-j.done:
		default:
			for _, j := range c.jobs.running() {
				j.cancel()
			}
			<-j.done
		}
	}
	c.jobs.takeEnded()
	var failed []string
	for _, j := range jobs {
		fmt.Fprintln(c.out, j.notice())
		if s, _ := j.Status(); s == jobFailed {
			failed = append(failed, j.id)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s failed: %s", plural(int64(len(failed)), "job"), strings.Join(failed, ", "))
	}
	return nil
}

// runFile runs the statements of the -f script, printing each before its
// results; the first that fails ends the client with its error. Then it
// waits for the jobs the script started.
func (c *sqlClient) runFile(path string) error {
	stmts, err := fileStatements(path)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		c.echo(strings.TrimSpace(st.Text))
		if err := c.run(st); err != nil {
			if errors.Is(err, errQuit) {
				break
			}
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return c.waitJobs()
}

// fileStatements returns the statements of the script in path, the last
// one even without its ';'.
func fileStatements(path string) ([]sqlStatement, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	stmts, rest := splitStatements(string(src))
	if !blankSQL(rest.Text) {
		stmts = append(stmts, rest)
	}
	return stmts, nil
}

// runInit runs the -i file: statements that set the session up, without
// printing them or their results.
func (c *sqlClient) runInit(path string) error {
	stmts, err := fileStatements(path)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if _, ok := clientCommand(st.Text); ok {
			return fmt.Errorf("%s: line %d: %s is a command of the client; an init file holds DDL and SET statements", path, st.Line, strings.Fields(st.Text)[0])
		}
		if _, err := c.session.Execute(padded(st)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if ins, qs := c.session.Pending(); ins+qs > 0 {
			c.session.Discard()
			return fmt.Errorf("%s: line %d: an init file sets the session up with DDL and SET statements; run INSERT INTO and queries in the session or with -f", path, st.Line)
		}
	}
	return nil
}

// run runs one statement. A failed statement is reported: interactive or
// from a pipe, the client goes on (the error is counted); with -f the
// error is returned. errQuit ends the client.
func (c *sqlClient) run(st sqlStatement) error {
	text := strings.TrimSpace(st.Text)
	if text == "" {
		return nil
	}
	if !c.interactive && c.cfg.script == "" {
		c.echo(text)
	}
	if c.cfg.script == "" {
		if err := c.hist.add(text); err != nil {
			fmt.Fprintf(c.out, "[WARNING] %v\n", err)
		}
	}
	err := c.runStatement(st)
	if err == nil || errors.Is(err, errQuit) || errors.Is(err, errInterrupted) {
		return err
	}
	if c.cfg.script != "" {
		return err
	}
	c.failed++
	fmt.Fprintf(c.out, "[ERROR] %v\n", err)
	return nil
}

// The commands of the client, which the session does not see.
var (
	stopJobCmd = regexp.MustCompile(`(?is)^STOP\s+JOB\s+'([^']*)'((?:\s+WITH\s+(?:SAVEPOINT|DRAIN))*)$`)
	showJobs   = regexp.MustCompile(`(?is)^SHOW\s+JOBS$`)
	historyRef = regexp.MustCompile(`^!(!|[0-9]+)$`)
)

// clientCommand returns the name of the client command that text is, if
// it is one.
func clientCommand(text string) (string, bool) {
	t := strings.ToUpper(strings.Join(strings.Fields(text), " "))
	switch t {
	case "QUIT", "EXIT", "HELP", "CLEAR", "HISTORY":
		return t, true
	}
	switch {
	case showJobs.MatchString(text):
		return "SHOW JOBS", true
	case stopJobCmd.MatchString(text):
		return "STOP JOB", true
	}
	return "", false
}

// lineCommand says whether a line typed at the start of a statement is a
// command that needs no ";": QUIT, EXIT, HELP, CLEAR, HISTORY, !n, !!.
func (c *sqlClient) lineCommand(line string) bool {
	if historyRef.MatchString(line) {
		return true
	}
	name, ok := clientCommand(line)
	return ok && name != "SHOW JOBS" && name != "STOP JOB"
}

// runLineCommand runs a command typed without ";". !n runs statement n of
// the history again.
func (c *sqlClient) runLineCommand(line string) error {
	if m := historyRef.FindStringSubmatch(line); m != nil {
		n := 0
		if m[1] != "!" {
			n, _ = strconv.Atoi(m[1])
		}
		if !c.interactive {
			fmt.Fprintf(c.out, "eddy> %s\n", line)
		}
		text, ok := c.hist.get(n)
		if !ok {
			fmt.Fprintf(c.out, "[ERROR] %s: the history holds %s (HISTORY lists them)\n", line, plural(int64(len(c.hist.entries)), "statement"))
			c.failed++
			return nil
		}
		if c.interactive {
			// run echoes the statements of a session read from a pipe.
			c.echo(text)
		}
		stmts, rest := splitStatements(text + ";")
		if !blankSQL(rest.Text) {
			stmts = append(stmts, rest)
		}
		for _, st := range stmts {
			if err := c.run(st); err != nil {
				return err
			}
		}
		return nil
	}
	return c.run(sqlStatement{Text: line, Line: 1, Col: 1})
}

// runStatement runs a statement: a client command, or one for the session
// whose results it prints and whose INSERT or query it runs as a job.
func (c *sqlClient) runStatement(st sqlStatement) error {
	text := strings.TrimSpace(st.Text)
	if name, ok := clientCommand(text); ok {
		return c.runClientCommand(name, text)
	}
	results, err := c.session.Execute(padded(st))
	if err != nil {
		c.session.Discard()
		return err
	}
	inserts, queries := c.session.Pending()
	switch {
	case queries > 0:
		return c.runQuery(text)
	case inserts > 0:
		return c.submit(text)
	}
	for _, r := range results {
		c.printResult(r)
	}
	return nil
}

// headers of the SHOW statements whose results print as one-column tables.
var showHeaders = []struct {
	re     *regexp.Regexp
	header string
}{
	{regexp.MustCompile(`(?i)^SHOW\s+TABLES\b`), "table name"},
	{regexp.MustCompile(`(?i)^SHOW\s+VIEWS\b`), "view name"},
	{regexp.MustCompile(`(?i)^SHOW\s+(USER\s+)?FUNCTIONS\b`), "function name"},
	{regexp.MustCompile(`(?i)^SHOW\s+CATALOGS\b`), "catalog name"},
	{regexp.MustCompile(`(?i)^SHOW\s+DATABASES\b`), "database name"},
	{regexp.MustCompile(`(?i)^SHOW\s+CURRENT\s+CATALOG\b`), "current catalog name"},
	{regexp.MustCompile(`(?i)^SHOW\s+CURRENT\s+DATABASE\b`), "current database name"},
}

var (
	setStmt   = regexp.MustCompile(`(?i)^SET\s`)
	resetStmt = regexp.MustCompile(`(?i)^RESET\b`)
)

// printResult prints what a statement shows: the names SHOW lists as a
// table, the text of DESCRIBE, EXPLAIN, SHOW CREATE and SET as it is, and
// a confirmation for the others.
func (c *sqlClient) printResult(r sql.Result) {
	for _, h := range showHeaders {
		if !h.re.MatchString(r.Statement) {
			continue
		}
		var rows [][]string
		for _, n := range strings.Split(strings.TrimSuffix(r.Text, "\n"), "\n") {
			if n != "" {
				rows = append(rows, []string{n})
			}
		}
		if len(rows) == 0 {
			fmt.Fprintln(c.out, "Empty set")
			return
		}
		t := newTextTable([]string{h.header}, nil, nil)
		t.fit(rows)
		for _, l := range t.render(rows) {
			fmt.Fprintln(c.out, l)
		}
		fmt.Fprintf(c.out, "%s in set\n", plural(int64(len(rows)), "row"))
		return
	}
	switch {
	case r.Text != "":
		fmt.Fprint(c.out, r.Text)
		if !strings.HasSuffix(r.Text, "\n") {
			fmt.Fprintln(c.out)
		}
	case setStmt.MatchString(r.Statement):
		fmt.Fprintln(c.out, "[INFO] Session property has been set.")
	case resetStmt.MatchString(r.Statement):
		fmt.Fprintln(c.out, "[INFO] Session property has been reset.")
	default:
		fmt.Fprintln(c.out, "[INFO] Execute statement succeeded.")
	}
}

// jobName is the name of the job of a statement: 'pipeline.name' if set,
// else the statement, on one line and cut.
func (c *sqlClient) jobName(text string) string {
	if v, ok := c.session.Settings()["pipeline.name"]; ok {
		return v
	}
	return cut(strings.Join(strings.Fields(text), " "), 60)
}

// newEnv returns the environment of a job with the session's settings:
// its parallelism, checkpoints ('execution.checkpointing.interval' and
// 'execution.checkpointing.min-pause', under
// 'state.checkpoints.dir'/<job id>) and the savepoint to start from
// ('execution.savepoint.path').
func (c *sqlClient) newEnv(id string) (*eddy.Environment, error) {
	p, err := c.session.Parallelism()
	if err != nil {
		return nil, err
	}
	opts := []eddy.Option{eddy.WithParallelism(p)}
	set := c.session.Settings()
	ckpt, err := checkpointSettings(set, true)
	if err != nil {
		return nil, err
	}
	opts = append(opts, ckpt...)
	if v, ok := set["state.checkpoints.dir"]; ok && v != "" {
		opts = append(opts, eddy.WithCheckpointDir(filepath.Join(strings.TrimPrefix(v, "file://"), id)))
	}
	if v, ok := set["execution.savepoint.path"]; ok && v != "" {
		opts = append(opts, eddy.WithRestoreFrom(strings.TrimPrefix(v, "file://")))
	}
	return eddy.NewEnvironment(opts...), nil
}

// submit runs the planned INSERTs as a job in the background, or to its
// end with SET 'table.dml-sync' = 'true'.
func (c *sqlClient) submit(text string) error {
	defer c.session.Discard()
	id := newJobID()
	env, err := c.newEnv(id)
	if err != nil {
		return err
	}
	if err := c.session.Build(env); err != nil {
		return err
	}
	sync := strings.EqualFold(c.session.Settings()["table.dml-sync"], "true")
	j := c.jobs.start(c.ctx, id, env, c.jobName(text), !sync)
	if !sync {
		fmt.Fprintf(c.out, "[INFO] Submitted the statement as job %s.\n", j.id)
		return nil
	}
	fmt.Fprintf(c.out, "[INFO] Running the statement as job %s to its end ('table.dml-sync').\n", j.id)
	select {
	case <-j.done:
	case <-c.intr:
		j.stop()
	case <-c.quit:
		j.stop()
	}
	status, err := j.Status()
	switch status {
	case jobFailed:
		return err
	case jobCanceled:
		fmt.Fprintf(c.out, "[INFO] Job %s was stopped.\n", j.id)
	default:
		fmt.Fprintf(c.out, "[INFO] Job %s finished.\n", j.id)
	}
	return nil
}

// resultMode returns the session's 'sql-client.execution.result-mode':
// table, changelog or tableau; by default table on a terminal and tableau
// otherwise.
func (c *sqlClient) resultMode() (string, error) {
	v, ok := c.session.Settings()["sql-client.execution.result-mode"]
	if !ok {
		if c.outTTY {
			return "table", nil
		}
		return "tableau", nil
	}
	switch m := strings.ToLower(strings.TrimSpace(v)); m {
	case "table", "changelog", "tableau":
		return m, nil
	}
	return "", fmt.Errorf("SET 'sql-client.execution.result-mode' = '%s': want 'table', 'changelog' or 'tableau'", v)
}

// maxTableRows returns 'sql-client.execution.max-table-result.rows', the
// most rows table mode keeps (Flink's default, 1000000).
func (c *sqlClient) maxTableRows() (int, error) {
	v, ok := c.session.Settings()["sql-client.execution.max-table-result.rows"]
	if !ok {
		return 1_000_000, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("SET 'sql-client.execution.max-table-result.rows' = '%s': want a number of rows (0 for no limit)", v)
	}
	return n, nil
}

// runQuery runs the planned query as a job and shows its result until it
// ends, q is pressed or Ctrl-C.
func (c *sqlClient) runQuery(text string) error {
	defer c.session.Discard()
	mode, err := c.resultMode()
	if err != nil {
		return err
	}
	maxRows, err := c.maxTableRows()
	if err != nil {
		return err
	}
	live := c.outTTY && mode != "tableau"
	var view resultView
	switch {
	case live:
		view = &liveView{w: c.out, fd: c.outFD, changelog: mode == "changelog", query: cut(strings.Join(strings.Fields(text), " "), 200),
			started: time.Now(), tbl: newResultTable(maxRows)}
	case mode == "table":
		view = &finalTableView{w: c.out, tbl: newResultTable(maxRows)}
	default:
		view = &tableauView{w: c.out}
	}
	var mu sync.Mutex
	c.sink = func(rt *types.RowType) sql.QuerySink {
		mu.Lock()
		view.begin(rt)
		mu.Unlock()
		return func(kind changelog.Kind, row types.Row) error {
			cells := cellTexts(rt, row)
			mu.Lock()
			view.change(kind, cells)
			mu.Unlock()
			return nil
		}
	}
	defer func() { c.sink = nil }()
	id := newJobID()
	env, err := c.newEnv(id)
	if err != nil {
		return err
	}
	if err := c.session.Build(env); err != nil {
		return err
	}
	j := c.jobs.start(c.ctx, id, env, c.jobName(text), false)
	var keys <-chan byte
	if live && c.inTTY && c.in != nil {
		if restore, err := ttyKeysMode(c.inFD); err == nil {
			defer restore()
			var stopKeys func()
			keys, stopKeys = c.in.keys()
			defer stopKeys()
		}
	}
	var tick <-chan time.Time
	if live {
		t := time.NewTicker(c.cfg.refresh)
		defer t.Stop()
		tick = t.C
	}
	interrupted := false
wait:
	for {
		select {
		case <-j.done:
			break wait
		case <-c.intr:
			interrupted = true
			j.stop()
		case <-c.quit:
			j.stop()
		case k, ok := <-keys:
			if !ok {
				keys = nil
			} else if k == 'q' || k == 'Q' {
				j.stop()
			}
		case <-tick:
			mu.Lock()
			view.(*liveView).draw()
			mu.Unlock()
		}
	}
	status, jerr := j.Status()
	mu.Lock()
	view.end(status)
	mu.Unlock()
	if jerr != nil {
		return jerr
	}
	if interrupted && !c.interactive {
		return errInterrupted
	}
	return nil
}

// runClientCommand runs a command of the client.
func (c *sqlClient) runClientCommand(name, text string) error {
	switch name {
	case "QUIT", "EXIT":
		return errQuit
	case "HELP":
		fmt.Fprint(c.out, sqlHelp)
	case "CLEAR":
		if c.outTTY {
			fmt.Fprint(c.out, "\x1b[H\x1b[2J")
		}
	case "HISTORY":
		c.hist.list(c.out)
	case "SHOW JOBS":
		if c.jobs.count() == 0 {
			fmt.Fprintln(c.out, "Empty set")
			return nil
		}
		for _, l := range c.jobs.table() {
			fmt.Fprintln(c.out, l)
		}
	case "STOP JOB":
		return c.stopJob(text)
	}
	return nil
}

// stopJob runs STOP JOB 'id' [WITH SAVEPOINT].
func (c *sqlClient) stopJob(text string) error {
	m := stopJobCmd.FindStringSubmatch(text)
	id, with := m[1], strings.ToUpper(m[2])
	if strings.Contains(with, "DRAIN") {
		return fmt.Errorf("STOP JOB '%s' WITH DRAIN: eddy does not drain a job's windows when it stops; stop it WITH SAVEPOINT or without", id)
	}
	j := c.jobs.find(id)
	if j == nil {
		return fmt.Errorf("STOP JOB '%s': there is no job %s in this session (SHOW JOBS lists them)", id, id)
	}
	if s, _ := j.Status(); s != jobRunning {
		return fmt.Errorf("STOP JOB '%s': the job is %s already", id, s)
	}
	if !strings.Contains(with, "SAVEPOINT") {
		j.stop()
		fmt.Fprintln(c.out, "[INFO] The job has been stopped.")
		return nil
	}
	dir := strings.TrimPrefix(c.session.Settings()["state.savepoints.dir"], "file://")
	if dir == "" {
		return fmt.Errorf("STOP JOB '%s' WITH SAVEPOINT: SET 'state.savepoints.dir' to the directory to write savepoints under first", id)
	}
	j.setStopping(true)
	path, err := savepointAndStop(c.ctx, j, dir)
	if err != nil {
		j.setStopping(false)
		return fmt.Errorf("STOP JOB '%s' WITH SAVEPOINT: %w", id, err)
	}
	<-j.done
	fmt.Fprintf(c.out, "[INFO] The job has been stopped with a savepoint.\nSavepoint path: %s\n", path)
	return nil
}

// savepointAndStop takes a savepoint of job j into dir and stops it. A job
// just submitted may not run yet, and one taking a checkpoint cannot take
// a savepoint at once: both are tried again while the job runs.
func savepointAndStop(ctx context.Context, j *sqlJob, dir string) (string, error) {
	for {
		path, err := j.env.TriggerSavepoint(ctx, dir, true)
		if err == nil || !retrySavepoint(err) {
			return path, err
		}
		select {
		case <-j.done:
			return "", fmt.Errorf("the job ended before the savepoint: %w", err)
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// retrySavepoint says whether a savepoint failed for a reason that passes:
// the job is starting, or a checkpoint is in flight.
func retrySavepoint(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "the job is not running") || strings.Contains(msg, "a checkpoint is in flight")
}

const sqlHelp = `Statements end with ';' and may span lines.

  CREATE TABLE | VIEW | FUNCTION, DROP, SET, RESET   change the session
  SHOW ..., DESCRIBE t, EXPLAIN statement            print at once
  INSERT INTO ..., statement sets                    start a job in the background
  SELECT ..., VALUES ..., WITH ...                   run a job and show its result
  SHOW JOBS                                          list the jobs of this session
  STOP JOB '<id>' [WITH SAVEPOINT]                   stop a job (a savepoint goes under 'state.savepoints.dir')
  HISTORY                                            list the statements run, numbered
  !n, !!                                             run statement n, or the last, again
  CLEAR                                              clear the terminal
  HELP                                               this list
  QUIT, EXIT, Ctrl-D                                 end the client (and the jobs it runs)

SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau' chooses how a
query's result shows: a table kept up to date in place, the changes as they come, or rows
printed as they come. q or Ctrl-C stops the query. Other settings of the client:
'table.dml-sync' = 'true' (an INSERT runs to its end before the next statement),
'sql-client.execution.max-table-result.rows', 'parallelism.default',
'execution.checkpointing.interval', 'execution.checkpointing.min-pause', 'state.checkpoints.dir', 'state.savepoints.dir',
'execution.savepoint.path' (the savepoint the next jobs start from), 'pipeline.name'.
`

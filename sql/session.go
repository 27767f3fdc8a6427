// Package sql is eddy's SQL front door, in Flink's dialect: a Session
// runs the statements of a script — CREATE TABLE with connectors, CREATE
// VIEW, CREATE FUNCTION, SET, INSERT INTO, statement sets, EXPLAIN, SHOW,
// DESCRIBE — and builds its INSERTs as one job on an eddy.Environment,
// onto the same operators as the Go API.
//
//	s := sql.NewSession()
//	if _, err := s.Execute(script); err != nil { ... }
//	env := eddy.NewEnvironment(eddy.WithParallelism(2))
//	if err := s.Build(env); err != nil { ... }
//	err := env.Execute(ctx, "job")
//
// Errors name the place in the script (line, column and a caret under the
// text at fault) and what would fix them.
package sql

import (
	"fmt"
	"strings"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
	"github.com/eddystream/eddy/sql/internal/expr"
	"github.com/eddystream/eddy/sql/internal/plan"
	"github.com/eddystream/eddy/sql/types"
)

// Session holds the catalog of a SQL session (tables, views, functions,
// settings) and the INSERTs its scripts have planned.
type Session struct {
	s *plan.Script
}

// Option configures a Session.
type Option func(*Session)

// WithConnectors makes the session find connectors and formats in reg
// instead of connector.Default.
func WithConnectors(reg *connector.Registry) Option {
	return func(s *Session) { s.s.Cat.Connectors = reg }
}

// WithParallelism sets the parallelism of the session's jobs where no SET
// 'parallelism.default' gives one (without it, eddy's default, 1). EXPLAIN
// shows the parallelism each operator then runs with.
func WithParallelism(n int) Option {
	return func(s *Session) { s.s.Parallelism = n }
}

// QuerySink receives the changes of a bare query's result: each change's
// kind and row, a row of the query's schema that is valid only during the
// call (read its fields with types.AppendText or copy it with Clone). An
// error fails the job.
type QuerySink func(kind changelog.Kind, row types.Row) error

// WithQueryOutput makes Build hand the changes of each bare query to the
// sink newSink returns for it, instead of printing them: query is the
// query's index among those Build runs and schema its result's columns.
// The sink runs in the subtasks of the query's last operator, concurrently
// when it has several; each subtask's changes come in order.
func WithQueryOutput(newSink func(query int, schema *types.RowType) QuerySink) Option {
	return func(s *Session) {
		s.s.QueryOutput = func(i int, rt *types.RowType) func(plan.Rec) error {
			sink := newSink(i, rt)
			return func(c plan.Rec) error { return sink(c.Kind, c.Row) }
		}
	}
}

// NewSession returns a session with an empty catalog. Its connectors are
// those registered in connector.Default (import
// github.com/eddystream/eddy/connectors/all for the built-in ones).
func NewSession(opts ...Option) *Session {
	s := &Session{s: &plan.Script{Cat: plan.NewCatalog(nil)}}
	for id, f := range registered {
		s.s.Cat.UserFuncs[id] = f
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Result is the outcome of one statement.
type Result struct {
	// Statement is the statement as canonical SQL.
	Statement string
	// Text is what SHOW, DESCRIBE, EXPLAIN and SET show, "" for other
	// statements.
	Text string
}

// Execute runs the statements of script in order. DDL and SET change the
// session; INSERT INTO statements (and statement sets) are planned and
// kept for Build; a bare query is kept too, and prints its changes when
// the job runs. It stops at the first statement that fails, returning the
// results of those before it.
func (s *Session) Execute(script string) ([]Result, error) {
	rs, err := s.s.Exec(script)
	out := make([]Result, len(rs))
	for i, r := range rs {
		out[i] = Result{Statement: r.Statement, Text: r.Text}
	}
	return out, err
}

// Explain returns the plan that EXPLAIN shows for stmt (an INSERT INTO, a
// statement set or a query) over the session's catalog: every operator
// with its parallelism and changelog mode. stmt is planned for the
// explanation only: Build does not run it.
func (s *Session) Explain(stmt string) (string, error) {
	rs, err := s.Execute("EXPLAIN " + stmt)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Text)
	}
	return b.String(), nil
}

// Build adds every INSERT and query the session planned to env, as one
// job: sources read by several statements are read once.
func (s *Session) Build(env *eddy.Environment) error {
	return s.s.Build(env)
}

// Pending returns the number of INSERT INTO statements (counting each of a
// statement set) and of bare queries planned since the session was made or
// last discarded: what Build would run.
func (s *Session) Pending() (inserts, queries int) {
	return len(s.s.Inserts), len(s.s.Queries)
}

// Discard forgets the planned INSERTs and queries and keeps the catalog
// and settings, so that the next Build runs only what is planned after it,
// as a client that runs every statement as a job of its own does.
func (s *Session) Discard() {
	s.s.Inserts, s.s.Queries = nil, nil
}

// Parallelism returns the parallelism of the session's jobs: SET
// 'parallelism.default' if the session set it, else WithParallelism's, else
// 1. A setting that is not a positive integer is an error.
func (s *Session) Parallelism() (int, error) {
	return s.s.DefaultParallelism()
}

// Settings returns the options of SET statements.
func (s *Session) Settings() map[string]string {
	out := make(map[string]string, len(s.s.Cat.Settings))
	for k, v := range s.s.Cat.Settings {
		out[k] = v
	}
	return out
}

// registered holds the functions registered in Go for CREATE FUNCTION.
var registered = map[string]*expr.Builtin{}

// ScalarFunction is a function written in Go that SQL can call once a
// CREATE FUNCTION binds a name to it.
type ScalarFunction struct {
	// Args are the argument types (Flink type strings: "STRING", "BIGINT")
	// and Result the result's type.
	Args   []string
	Result string
	// Eval computes the result from the arguments, boxed as
	// sql/types.Value documents (nil is NULL). It is called only when no
	// argument is NULL unless CallOnNull is set; an error fails the job.
	// The slice args is only valid during the call: the next call reuses
	// it, so Eval must not keep it (it may keep the values, strings
	// included: they are copies of the row's). Calls of one compiled
	// expression come from one goroutine.
	Eval       func(args []any) (any, error)
	CallOnNull bool
	// typed, when set (Func1, Func2, Func3), compiles the call with its
	// arguments and result unboxed, in place of Eval.
	typed func(args []*expr.Eval) *expr.Eval
}

// RegisterFunction registers f under identifier, the text of CREATE
// FUNCTION name AS 'identifier'. Register before creating sessions.
func RegisterFunction(identifier string, f ScalarFunction) error {
	b, err := userFunction(identifier, f)
	if err != nil {
		return fmt.Errorf("sql: function %q: %w", identifier, err)
	}
	registered[identifier] = b
	return nil
}

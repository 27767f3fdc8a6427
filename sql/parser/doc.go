// Package parser parses eddy's SQL, the dialect of Apache Flink SQL, into an
// abstract syntax tree.
//
// The parser is syntactic only: it checks the grammar, not names or types.
// Every node of the tree carries its position (line and column, 1-based,
// columns counted in characters) so that later stages can point at the
// offending text; ErrorAt builds an error with the source line and a caret
// for such a position.
//
// Entry points: Parse reads a script of statements separated by ";",
// ParseStatement a single statement, ParseExpr an expression and ParseType a
// data type. Syntax errors are *Error values that name the line, the column,
// the unexpected text and what was expected there.
//
// Format (and the String method of every node) prints a tree back as
// canonical SQL: keywords in upper case, identifiers in backquotes only when
// they need them (when they are reserved words of eddy or of Flink, so that
// the output is Flink SQL too), and parentheses only where precedence
// requires them.
// Parsing the canonical text gives the same tree, positions aside.
//
// Comments (-- and /* */) are skipped, except hints: /*+ ... */ after
// SELECT (query hints) and after a table name (table hints such as
// OPTIONS('k' = 'v')) are kept in the tree; elsewhere a hint is an error.
//
// Keywords are case-insensitive; identifiers keep their spelling. An
// identifier is either plain (a letter or "_", then letters, digits, "_" or
// "$") or in backquotes, where a doubled backquote stands for one. The
// reserved words (see IsReserved) must be backquoted to be used as names;
// other keywords (KEY, VALUE, DAY, ...) are ordinary identifiers where a
// name is expected.
package parser

package parser

import (
	"strconv"
)

// maxDepth bounds the nesting of expressions, queries and types, so that a
// pathological input fails with an error instead of exhausting the stack.
const maxDepth = 500

// Parse parses a script: statements separated by ";" (a final ";" is
// optional, empty statements are skipped). BEGIN STATEMENT SET; ...; END
// spans several ";"-separated parts and gives one *StatementSet.
func Parse(src string) ([]Statement, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var stmts []Statement
	err = p.run(func() { stmts = p.parseScript() })
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

// ParseStatement parses exactly one statement, optionally followed by ";".
func ParseStatement(src string) (Statement, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var s Statement
	err = p.run(func() {
		s = p.parseStatement()
		p.acceptOp(";")
		p.expectEOF()
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParseExpr parses one scalar expression.
func ParseExpr(src string) (Expr, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var e Expr
	err = p.run(func() {
		e = p.parseExpr()
		p.expectEOF()
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ParseType parses one data type, e.g. "DECIMAL(10, 2) NOT NULL" or
// "ROW<a INT, b ARRAY<STRING>>".
func ParseType(src string) (*Type, error) {
	p, err := newParser(src)
	if err != nil {
		return nil, err
	}
	var t *Type
	err = p.run(func() {
		t = p.parseType()
		p.expectEOF()
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// parser is a recursive-descent parser over the tokens of one source text.
// Errors are raised by panicking with a bailout, recovered in run.
//
// Expectations: every check of the next token that fails records what it
// looked for (note), at the index of that token; an error reports the
// expectations recorded at the farthest index reached, which is the list of
// everything the grammar would have accepted there.
type parser struct {
	src     string
	toks    []token
	i       int
	far     int
	exp     []string
	depth   int
	nparams int
	// best is the error of the failed attempt that got farthest.
	best *Error
	// notQuery holds the token indexes of "(" in FROM where a query was
	// tried and failed (see parenTable).
	notQuery map[int]bool
}

// bailout carries a syntax error up to run. A fatal one (nesting too deep)
// is not caught by attempt: no alternative can get past it.
type bailout struct {
	err   *Error
	fatal bool
}

func newParser(src string) (*parser, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	return &parser{src: src, toks: toks}, nil
}

// run calls f and turns a bailout into an error; other panics (bugs) go on.
func (p *parser) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = b.err
		}
	}()
	f()
	return nil
}

// attempt runs f; if f fails, it restores the position and returns false.
// The expectations recorded by f stay, and so does its error if it is the
// farthest so far: should the other alternative fail before that point,
// the error of the alternative that got farther is reported.
func (p *parser) attempt(f func()) (ok bool) {
	save, depth, nparams := p.i, p.depth, p.nparams
	defer func() {
		if r := recover(); r != nil {
			b, isBail := r.(bailout)
			if !isBail || b.fatal {
				panic(r)
			}
			if p.best == nil || after(b.err.Pos(), p.best.Pos()) {
				p.best = b.err
			}
			p.i, p.depth, p.nparams = save, depth, nparams
			ok = false
		}
	}()
	f()
	return true
}

// after reports whether position a comes after b.
func after(a, b Pos) bool {
	return a.Line > b.Line || (a.Line == b.Line && a.Col > b.Col)
}

func (p *parser) tok() token { return p.toks[p.i] }

// peek returns the token n places after the current one (EOF past the end).
func (p *parser) peek(n int) token {
	if j := p.i + n; j < len(p.toks) {
		return p.toks[j]
	}
	return p.toks[len(p.toks)-1]
}

// advance consumes and returns the current token.
func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// note records that label was expected at the current token.
func (p *parser) note(label string) {
	if p.i > p.far {
		p.far = p.i
		p.exp = p.exp[:0]
	}
	if p.i == p.far {
		for _, l := range p.exp {
			if l == label {
				return
			}
		}
		p.exp = append(p.exp, label)
	}
}

// fail reports the unexpected token at the farthest point reached, with
// what was expected there (labels are recorded at the current token first).
func (p *parser) fail(labels ...string) {
	for _, l := range labels {
		p.note(l)
	}
	t := p.toks[p.far]
	exp := append([]string(nil), p.exp...)
	p.bail(newError(p.src, t.pos, "unexpected "+t.describe(), exp))
}

// failAt reports msg at token t with the given expectations.
func (p *parser) failAt(t token, msg string, expected ...string) {
	p.bail(newError(p.src, t.pos, msg, expected))
}

// bail raises err, or the error of a failed attempt that got farther.
func (p *parser) bail(err *Error) {
	if p.best != nil && after(p.best.Pos(), err.Pos()) {
		err = p.best
	}
	panic(bailout{err: err})
}

// enter and leave bound the nesting depth.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		t := p.tok()
		panic(bailout{err: newError(p.src, t.pos, "too deeply nested", []string{"at most " + strconv.Itoa(maxDepth) + " levels of nesting"}), fatal: true})
	}
}

func (p *parser) leave() { p.depth-- }

// isKw reports whether the current token is keyword kw (upper case),
// without recording an expectation.
func (p *parser) isKw(kw string) bool {
	t := p.toks[p.i]
	return t.kind == tokIdent && t.upper == kw
}

// isKwAt is isKw for the token n places ahead.
func (p *parser) isKwAt(n int, kw string) bool {
	t := p.peek(n)
	return t.kind == tokIdent && t.upper == kw
}

// atKw is isKw recording kw as expected when it does not match.
func (p *parser) atKw(kw string) bool {
	if p.isKw(kw) {
		return true
	}
	p.note(kw)
	return false
}

// acceptKw consumes keyword kw if it is next.
func (p *parser) acceptKw(kw string) bool {
	if p.atKw(kw) {
		p.i++
		return true
	}
	return false
}

// acceptKws consumes a keyword sequence such as GROUP BY if its first word
// is next; the following words are then required.
func (p *parser) acceptKws(kws ...string) bool {
	if !p.isKw(kws[0]) {
		p.note(joinWords(kws))
		return false
	}
	p.i++
	for _, kw := range kws[1:] {
		p.expectKw(kw)
	}
	return true
}

// expectKw consumes keyword kw or fails.
func (p *parser) expectKw(kw string) token {
	if !p.atKw(kw) {
		p.fail()
	}
	return p.advance()
}

func (p *parser) isOp(op string) bool {
	t := p.toks[p.i]
	return t.kind == tokOp && t.text == op
}

func (p *parser) isOpAt(n int, op string) bool {
	t := p.peek(n)
	return t.kind == tokOp && t.text == op
}

func (p *parser) atOp(op string) bool {
	if p.isOp(op) {
		return true
	}
	p.note(strconv.Quote(op))
	return false
}

func (p *parser) acceptOp(op string) bool {
	if p.atOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expectOp(op string) token {
	if !p.atOp(op) {
		p.fail()
	}
	return p.advance()
}

func (p *parser) expectEOF() {
	if p.tok().kind != tokEOF {
		p.fail("end of input")
	}
}

// isIdentTok reports whether t can be a name: a quoted identifier or a
// plain word that is not reserved.
func isIdentTok(t token) bool {
	return t.kind == tokQuotedIdent || (t.kind == tokIdent && !reserved[t.upper])
}

// ident parses a name; what describes it for errors ("a column name").
func (p *parser) ident(what string) *Ident {
	t := p.tok()
	if !isIdentTok(t) {
		if t.kind == tokIdent {
			p.note(what)
			p.failAt(t, "unexpected reserved word "+strconv.Quote(t.text), p.expAt()...)
		}
		p.fail(what)
	}
	p.i++
	return &Ident{Pos: t.pos, Name: t.text}
}

// expAt returns the expectations recorded at the current token, with a hint
// to backquote a reserved word used as a name.
func (p *parser) expAt() []string {
	var exp []string
	if p.far == p.i {
		exp = append(exp, p.exp...)
	}
	return append(exp, "`"+p.tok().text+"` to use it as a name")
}

// objectName parses a possibly qualified name a.b.c.
func (p *parser) objectName(what string) *ObjectName {
	first := p.ident(what)
	n := &ObjectName{Pos: first.Pos, Parts: []*Ident{first}}
	for p.isOp(".") {
		p.i++
		n.Parts = append(n.Parts, p.ident(what))
	}
	return n
}

// identList parses name, name, ...
func (p *parser) identList(what string) []*Ident {
	ids := []*Ident{p.ident(what)}
	for p.acceptOp(",") {
		ids = append(ids, p.ident(what))
	}
	return ids
}

// parenIdentList parses (name, name, ...).
func (p *parser) parenIdentList(what string) []*Ident {
	p.expectOp("(")
	ids := p.identList(what)
	p.expectOp(")")
	return ids
}

// stringLit parses a string literal; what describes it for errors.
func (p *parser) stringLit(what string) *StringLit {
	t := p.tok()
	if t.kind != tokString && t.kind != tokNString {
		p.fail(what)
	}
	p.i++
	return &StringLit{Pos: t.pos, Value: t.text, National: t.kind == tokNString}
}

// intLit parses a non-negative integer that fits an int.
func (p *parser) intLit(what string) int {
	t := p.tok()
	if t.kind != tokNumber {
		p.fail(what)
	}
	n, err := strconv.ParseInt(t.text, 10, 32)
	if err != nil || n < 0 {
		p.failAt(t, "invalid integer "+t.text, what+" (a whole number below 2^31)")
	}
	p.i++
	return int(n)
}

func joinWords(w []string) string {
	s := w[0]
	for _, x := range w[1:] {
		s += " " + x
	}
	return s
}

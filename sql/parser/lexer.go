package parser

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexer splits the source into tokens. Comments and white space are skipped.
type lexer struct {
	// inHint is set between /*+ and */: the hint's content is lexed as
	// tokens.
	inHint bool
	src    string
	off    int // byte offset of the next character
	line   int // line of the next character
	col    int // column (in runes) of the next character
	toks   []token
	// hintPos is the position of the /*+ of the current hint.
	hintPos Pos
}

// lex returns the tokens of src, ending with a tokEOF token.
func lex(src string) ([]token, error) {
	lx := &lexer{src: src, line: 1, col: 1}
	// A rough guess of the token count saves a few slice growths.
	lx.toks = make([]token, 0, len(src)/4+1)
	for {
		if err := lx.skipSpaceAndComments(); err != nil {
			return nil, err
		}
		if lx.off >= len(lx.src) {
			if lx.inHint {
				return nil, lx.errorAt(lx.hintPos, "unterminated hint", `"*/" to close the hint`)
			}
			lx.toks = append(lx.toks, token{kind: tokEOF, pos: lx.pos()})
			return lx.toks, nil
		}
		if err := lx.next(); err != nil {
			return nil, err
		}
	}
}

func (lx *lexer) pos() Pos { return Pos{Line: lx.line, Col: lx.col} }

// peekByte returns the byte at offset off+n, or 0 past the end.
func (lx *lexer) peekByte(n int) byte {
	if lx.off+n < len(lx.src) {
		return lx.src[lx.off+n]
	}
	return 0
}

// advance moves past one character (rune), keeping line and column.
func (lx *lexer) advance() {
	c := lx.src[lx.off]
	if c < utf8.RuneSelf {
		lx.off++
		if c == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
		return
	}
	_, size := utf8.DecodeRuneInString(lx.src[lx.off:])
	lx.off += size
	lx.col++
}

func (lx *lexer) errorAt(p Pos, msg string, expected ...string) error {
	return newError(lx.src, p, msg, expected)
}

func (lx *lexer) skipSpaceAndComments() error {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			lx.advance()
		case c == '-' && lx.peekByte(1) == '-':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance()
			}
		case c == '/' && lx.peekByte(1) == '*' && lx.peekByte(2) == '+' && !lx.inHint:
			return nil // a hint: see next
		case c == '*' && lx.peekByte(1) == '/' && lx.inHint:
			return nil
		case c == '/' && lx.peekByte(1) == '*':
			start := lx.pos()
			lx.advance()
			lx.advance()
			for {
				if lx.off >= len(lx.src) {
					return lx.errorAt(start, "unterminated comment", `"*/" to close the comment`)
				}
				if lx.src[lx.off] == '*' && lx.peekByte(1) == '/' {
					lx.advance()
					lx.advance()
					break
				}
				lx.advance()
			}
		default:
			if c >= utf8.RuneSelf {
				r, _ := utf8.DecodeRuneInString(lx.src[lx.off:])
				if unicode.IsSpace(r) {
					lx.advance()
					continue
				}
			}
			return nil
		}
	}
	return nil
}

func isIdentStart(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= utf8.RuneSelf && unicode.IsLetter(r))
}

func isIdentPart(r rune) bool {
	return isIdentStart(r) || r == '$' || (r >= '0' && r <= '9') ||
		(r >= utf8.RuneSelf && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next lexes one token starting at a non-space character.
func (lx *lexer) next() error {
	start := lx.pos()
	c := lx.src[lx.off]
	switch {
	case c == '/' && lx.peekByte(1) == '*' && lx.peekByte(2) == '+' && !lx.inHint:
		lx.advance()
		lx.advance()
		lx.advance()
		lx.inHint = true
		lx.hintPos = start
		lx.toks = append(lx.toks, token{kind: tokOp, text: "/*+", pos: start})
		return nil
	case c == '*' && lx.peekByte(1) == '/' && lx.inHint:
		lx.advance()
		lx.advance()
		lx.inHint = false
		lx.toks = append(lx.toks, token{kind: tokOp, text: "*/", pos: start})
		return nil
	case c == '\'':
		s, err := lx.quoted('\'', "string literal")
		if err != nil {
			return err
		}
		lx.toks = append(lx.toks, token{kind: tokString, text: s, pos: start})
		return nil
	case (c == 'N' || c == 'n') && lx.peekByte(1) == '\'':
		lx.advance()
		s, err := lx.quoted('\'', "string literal")
		if err != nil {
			return err
		}
		lx.toks = append(lx.toks, token{kind: tokNString, text: s, pos: start})
		return nil
	case (c == 'X' || c == 'x') && lx.peekByte(1) == '\'':
		lx.advance()
		s, err := lx.quoted('\'', "binary string literal")
		if err != nil {
			return err
		}
		for i := 0; i < len(s); i++ {
			if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
				return lx.errorAt(start, "invalid binary string literal X'"+truncate(s, 20)+"'", "hexadecimal digits (0-9, A-F)")
			}
		}
		if len(s)%2 != 0 {
			return lx.errorAt(start, "invalid binary string literal X'"+truncate(s, 20)+"'", "an even number of hexadecimal digits")
		}
		lx.toks = append(lx.toks, token{kind: tokBinary, text: s, pos: start})
		return nil
	case c == '`':
		s, err := lx.quoted('`', "quoted identifier")
		if err != nil {
			return err
		}
		if s == "" {
			return lx.errorAt(start, "empty quoted identifier", "a name between the backquotes")
		}
		lx.toks = append(lx.toks, token{kind: tokQuotedIdent, text: s, pos: start})
		return nil
	case isDigit(c) || (c == '.' && isDigit(lx.peekByte(1))):
		lx.number()
		return nil
	}
	if c >= utf8.RuneSelf || isIdentStart(rune(c)) {
		r, _ := utf8.DecodeRuneInString(lx.src[lx.off:])
		if isIdentStart(r) {
			begin := lx.off
			for lx.off < len(lx.src) {
				r, _ := utf8.DecodeRuneInString(lx.src[lx.off:])
				if !isIdentPart(r) {
					break
				}
				lx.advance()
			}
			text := lx.src[begin:lx.off]
			lx.toks = append(lx.toks, token{kind: tokIdent, text: text, upper: upperASCII(text), pos: start})
			return nil
		}
		return lx.errorAt(start, "unexpected character "+quoteRune(r), "a name, a literal, an operator or punctuation")
	}
	op := ""
	two := ""
	if lx.off+1 < len(lx.src) {
		two = lx.src[lx.off : lx.off+2]
	}
	switch two {
	case "<>", "<=", ">=", "!=", "||", "=>":
		op = two
	default:
		switch c {
		case '=', '<', '>', '+', '-', '*', '/', '%', '.', ',', ';', '(', ')', '[', ']':
			op = string(c)
		case '?':
			lx.advance()
			lx.toks = append(lx.toks, token{kind: tokParam, text: "?", pos: start})
			return nil
		default:
			return lx.errorAt(start, "unexpected character "+quoteRune(rune(c)), "a name, a literal, an operator or punctuation")
		}
	}
	for range len(op) {
		lx.advance()
	}
	lx.toks = append(lx.toks, token{kind: tokOp, text: op, pos: start})
	return nil
}

// quoted lexes a literal enclosed in q, where a doubled q stands for one q,
// and returns its unescaped content.
func (lx *lexer) quoted(q byte, what string) (string, error) {
	start := lx.pos()
	lx.advance() // opening quote
	begin := lx.off
	var b strings.Builder
	escaped := false
	for {
		if lx.off >= len(lx.src) {
			return "", lx.errorAt(start, "unterminated "+what, `a closing "`+string(q)+`"`)
		}
		if lx.src[lx.off] != q {
			lx.advance()
			continue
		}
		if lx.peekByte(1) == q {
			// A doubled quote stands for one.
			b.WriteString(lx.src[begin : lx.off+1])
			escaped = true
			lx.advance()
			lx.advance()
			begin = lx.off
			continue
		}
		s := lx.src[begin:lx.off]
		lx.advance()
		if !escaped {
			return s, nil
		}
		b.WriteString(s)
		return b.String(), nil
	}
}

// number lexes an integer, a decimal or a number with an exponent.
func (lx *lexer) number() {
	start := lx.pos()
	begin := lx.off
	for lx.off < len(lx.src) && isDigit(lx.src[lx.off]) {
		lx.advance()
	}
	if lx.off < len(lx.src) && lx.src[lx.off] == '.' {
		lx.advance()
		for lx.off < len(lx.src) && isDigit(lx.src[lx.off]) {
			lx.advance()
		}
	}
	if c := lx.peekByte(0); c == 'e' || c == 'E' {
		d := lx.peekByte(1)
		if isDigit(d) || ((d == '+' || d == '-') && isDigit(lx.peekByte(2))) {
			lx.advance()
			if d == '+' || d == '-' {
				lx.advance()
			}
			for lx.off < len(lx.src) && isDigit(lx.src[lx.off]) {
				lx.advance()
			}
		}
	}
	lx.toks = append(lx.toks, token{kind: tokNumber, text: lx.src[begin:lx.off], pos: start})
}

// upperASCII upper-cases the ASCII letters of s (keywords are ASCII), and
// returns s itself when it has no lower-case letter.
func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

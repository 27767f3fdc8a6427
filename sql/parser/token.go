package parser

import "strconv"

// tokenKind is the lexical class of a token.
type tokenKind uint8

const (
	tokEOF         tokenKind = iota
	tokIdent                 // plain identifier or keyword; text as written, upper in token.upper
	tokQuotedIdent           // `...`; text is the unescaped name
	tokString                // '...'; text is the unescaped value
	tokNString               // N'...'; text is the unescaped value
	tokBinary                // X'...'; text is the hex digits
	tokNumber                // 1, 1.5, .5, 1e3; text as written
	tokParam                 // ?
	tokOp                    // operators and punctuation; text is the operator
)

// token is one lexical token. Its position is that of its first character.
type token struct {
	kind  tokenKind
	text  string
	upper string // for tokIdent: text in upper case (keyword comparisons)
	pos   Pos
}

// describe names the token for an error message: `"FROM"`, `"x"`,
// `'abc'`, "the end of the input".
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokIdent:
		return strconv.Quote(t.text)
	case tokQuotedIdent:
		return "`" + truncate(t.text, 30) + "`"
	case tokString:
		return "string " + quoteString(truncate(t.text, 30))
	case tokNString:
		return "string N" + quoteString(truncate(t.text, 30))
	case tokBinary:
		return "binary string X'" + truncate(t.text, 30) + "'"
	case tokNumber:
		return "number " + t.text
	default:
		if t.text == "/*+" {
			return `"/*+" (a hint; hints go after SELECT and after table names)`
		}
		return strconv.Quote(t.text)
	}
}

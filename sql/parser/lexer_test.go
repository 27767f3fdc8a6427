package parser

import (
	"fmt"
	"strings"
	"testing"
)

// tokenString prints tokens as kind:text@line:col.
func tokenString(toks []token) string {
	var parts []string
	for _, t := range toks {
		kind := [...]string{"eof", "ident", "qident", "str", "nstr", "bin", "num", "param", "op"}[t.kind]
		parts = append(parts, fmt.Sprintf("%s:%s@%s", kind, t.text, t.pos))
	}
	return strings.Join(parts, " ")
}

func TestLexer(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"SELECT a, b", "ident:SELECT@1:1 ident:a@1:8 op:,@1:9 ident:b@1:11 eof:@1:12"},
		{"`a``b` `x y`", "qident:a`b@1:1 qident:x y@1:8 eof:@1:13"},
		{"'it''s' ''", "str:it's@1:1 str:@1:9 eof:@1:11"},
		{"N'x' n'y' X'0A' x'ff'", "nstr:x@1:1 nstr:y@1:6 bin:0A@1:11 bin:ff@1:17 eof:@1:22"},
		{"1 1.5 .5 1. 1e3 1.5E-3 2e 3e+", "num:1@1:1 num:1.5@1:3 num:.5@1:7 num:1.@1:10 num:1e3@1:13 num:1.5E-3@1:17 num:2@1:24 ident:e@1:25 num:3@1:27 ident:e@1:28 op:+@1:29 eof:@1:30"},
		{"a<>b!=c<=d>=e||f=>g", "ident:a@1:1 op:<>@1:2 ident:b@1:4 op:!=@1:5 ident:c@1:7 op:<=@1:8 ident:d@1:10 op:>=@1:11 ident:e@1:13 op:||@1:14 ident:f@1:16 op:=>@1:17 ident:g@1:19 eof:@1:20"},
		{"a.b[1];?%*/", "ident:a@1:1 op:.@1:2 ident:b@1:3 op:[@1:4 num:1@1:5 op:]@1:6 op:;@1:7 param:?@1:8 op:%@1:9 op:*@1:10 op:/@1:11 eof:@1:12"},
		{"a -- comment\n  b /* block\n comment */ c", "ident:a@1:1 ident:b@2:3 ident:c@3:13 eof:@3:14"},
		{"'é' ü$1 x", "str:é@1:1 ident:ü$1@1:5 ident:x@1:9 eof:@1:10"},
		{"a\r\n\tb", "ident:a@1:1 ident:b@2:2 eof:@2:3"},
		{"a-- x", "ident:a@1:1 eof:@1:6"},
		{"ARRAY<ARRAY<INT>>", "ident:ARRAY@1:1 op:<@1:6 ident:ARRAY@1:7 op:<@1:12 ident:INT@1:13 op:>@1:16 op:>@1:17 eof:@1:18"},
	} {
		toks, err := lex(c.src)
		if err != nil {
			t.Errorf("lex(%q): %v", c.src, err)
			continue
		}
		if got := tokenString(toks); got != c.want {
			t.Errorf("lex(%q):\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestLexerErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"SELECT 'abc", "line 1, column 8: unterminated string literal (expected a closing \"'\")\nSELECT 'abc\n       ^"},
		{"a\n  `b", "line 2, column 3: unterminated quoted identifier (expected a closing \"`\")\n  `b\n  ^"},
		{"/* x", "line 1, column 1: unterminated comment (expected \"*/\" to close the comment)\n/* x\n^"},
		{"a ~", "line 1, column 3: unexpected character '~' (expected a name, a literal, an operator or punctuation)\na ~\n  ^"},
		{"\ta #", "line 1, column 4: unexpected character '#' (expected a name, a literal, an operator or punctuation)\n\ta #\n\t  ^"},
		{"X'1'", "line 1, column 1: invalid binary string literal X'1' (expected an even number of hexadecimal digits)\nX'1'\n^"},
		{"``", "line 1, column 1: empty quoted identifier (expected a name between the backquotes)\n``\n^"},
	} {
		_, err := lex(c.src)
		if err == nil {
			t.Errorf("lex(%q): no error", c.src)
			continue
		}
		if got := err.Error(); got != c.want {
			t.Errorf("lex(%q):\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestErrorAt(t *testing.T) {
	src := "CREATE TABLE t (a INT)\nWITH ('connector' = 'x',\n      'bad.key' = 'v')"
	err := ErrorAt(src, Pos{Line: 3, Col: 7}, "unknown option 'bad.key'", "an option of connector x")
	want := "line 3, column 7: unknown option 'bad.key' (expected an option of connector x)\n      'bad.key' = 'v')\n      ^"
	if got := err.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if err.Pos() != (Pos{3, 7}) {
		t.Errorf("Pos() = %v", err.Pos())
	}
	// Long lines are cut around the error.
	long := strings.Repeat("a, ", 100) + "b c" + strings.Repeat(", d", 100)
	err = ErrorAt(long, Pos{Line: 1, Col: 304}, "here")
	want = "line 1, column 304: here\n..." + long[243:363] + "...\n" + strings.Repeat(" ", 63) + "^"
	if got := err.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A later stage may have nothing to list as expected.
	err = ErrorAt(src, Pos{Line: 1, Col: 14}, "table t exists")
	want = "line 1, column 14: table t exists\nCREATE TABLE t (a INT)\n             ^"
	if got := err.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

package expr

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/eddystream/eddy/sql/types"
)

// maxStringResult bounds the strings REPEAT, LPAD and RPAD build, so that a
// bad argument fails the expression instead of the process.
const maxStringResult = 1 << 28

// The string functions. Positions and lengths count characters (Unicode
// code points) and start at 1, as in Flink.
func init() {
	str, integer := famStr, famInt
	register(&Builtin{
		Name: "||",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 2 || !famStr.accepts(args[0]) || !famStr.accepts(args[1]) {
				return types.Type{}, nil, &ArgError{"||", args, "two strings"}
			}
			casts := sigOf(str, str).casts(args)
			n := int64(casts[0].Length()) + int64(casts[1].Length())
			var t types.Type
			switch {
			case n >= types.MaxLength:
				t = types.String()
			case casts[0].Kind() == types.KindChar && casts[1].Kind() == types.KindChar:
				t = types.Char(int(n))
			default:
				t = types.VarChar(max(int(n), 1))
			}
			return nullableIfAny(t, args), casts, nil
		},
		Func: &Func{Infix: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			x, y := args[0].Str, args[1].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				a, n1 := x(r)
				b, n2 := y(r)
				if n1 || n2 {
					return "", true
				}
				if a == "" {
					return b, false
				}
				if b == "" {
					return a, false
				}
				return a + b, false
			}}, nil
		}},
		Doc: "string1 || string2: the concatenation of two strings; NULL if either is NULL",
	})
	def("CONCAT", "CONCAT(string1, string2, ...): the concatenation of the strings; NULL if any is NULL",
		resolver("CONCAT", "one or more strings", fixed(types.String()), sig{args: []fam{str}, variadic: true}),
		func(c *Call, args []*Eval) (*Eval, error) {
			fs := gather(args, func(e *Eval) func(types.Row) (string, bool) { return e.Str })
			return &Eval{Str: func(r types.Row) (string, bool) {
				var b strings.Builder
				for _, f := range fs {
					s, null := f(r)
					if null {
						return "", true
					}
					b.WriteString(s)
				}
				return b.String(), false
			}}, nil
		})
	def("CONCAT_WS", "CONCAT_WS(separator, string1, string2, ...): the strings joined by separator, skipping NULL strings; NULL if separator is NULL",
		resolver("CONCAT_WS", "a separator and strings", fixed(types.String()), sig{args: []fam{str}, variadic: true}),
		func(c *Call, args []*Eval) (*Eval, error) {
			sep := args[0].Str
			fs := gather(args[1:], func(e *Eval) func(types.Row) (string, bool) { return e.Str })
			return &Eval{Str: func(r types.Row) (string, bool) {
				sp, null := sep(r)
				if null {
					return "", true
				}
				var b strings.Builder
				first := true
				for _, f := range fs {
					s, null := f(r)
					if null {
						continue
					}
					if !first {
						b.WriteString(sp)
					}
					first = false
					b.WriteString(s)
				}
				return b.String(), false
			}}, nil
		})
	for _, name := range []string{"CHAR_LENGTH", "CHARACTER_LENGTH"} {
		def(name, name+"(string): the number of characters of string",
			resolver(name, "a string", fixed(types.Int()), sigOf(str)),
			func(c *Call, args []*Eval) (*Eval, error) {
				x := args[0].Str
				return &Eval{Int: func(r types.Row) (int64, bool) {
					s, null := x(r)
					return int64(utf8.RuneCountInString(s)), null
				}}, nil
			})
	}
	sameType := func(args []types.Type) types.Type { return args[0] }
	def("UPPER", "UPPER(string): string in upper case",
		resolver("UPPER", "a string", sameType, sigOf(str)), strFn1(toUpper))
	def("LOWER", "LOWER(string): string in lower case",
		resolver("LOWER", "a string", sameType, sigOf(str)), strFn1(strings.ToLower))
	def("INITCAP", "INITCAP(string): string with the first letter of each word in upper case and the others in lower case; a word is a run of ASCII letters and digits",
		resolver("INITCAP", "a string", sameType, sigOf(str)), strFn1(initcap))
	for _, name := range []string{"POSITION", "LOCATE"} {
		doc := "POSITION(string1 IN string2 [FROM integer]): the position (from 1) of the first occurrence of string1 in string2 at or after position integer; 0 if there is none"
		if name == "LOCATE" {
			doc = "LOCATE(string1, string2 [, integer]): the position (from 1) of the first occurrence of string1 in string2 at or after position integer; 0 if there is none"
		}
		def(name, doc,
			resolver(name, "(string1, string2 [, integer])", fixed(types.Int()), sigOf(str, str), sigOf(str, str, integer)),
			intFnStr(func(c *Call, s []string, n []int64) int64 {
				from := int64(1)
				if len(s) == 3 {
					from = n[2]
				}
				return indexFrom(s[1], s[0], from-1) + 1
			}))
	}
	def("INSTR", "INSTR(string1, string2 [, start [, nth]]): the position (from 1) of the nth occurrence of string2 in string1 searching from position start (backwards from the end if start is negative); 0 if there is none",
		resolver("INSTR", "(string1, string2 [, start [, nth]])", fixed(types.Int()), sigOf(str, str), sigOf(str, str, integer), sigOf(str, str, integer, integer)),
		intFnStr(func(c *Call, s []string, n []int64) int64 {
			start, nth := int64(1), int64(1)
			if len(s) > 2 {
				start = n[2]
			}
			if len(s) > 3 {
				nth = n[3]
			}
			if nth <= 0 {
				fail(c, "the occurrence %d is not positive", nth)
			}
			return instr(s[0], s[1], start, nth)
		}))
	for _, name := range []string{"SUBSTRING", "SUBSTR"} {
		def(name, name+"(string, start [, length]): the characters of string from position start (from 1; counted from the end if negative) up to length characters (to the end by default); NULL if length is negative",
			resolver(name, "(string, start [, length])", func(a []types.Type) types.Type { return varcharOf(a[0]).Nullable() },
				sigOf(str, integer), sigOf(str, integer, integer)),
			strFnN(func(c *Call, s []string, n []int64) (string, bool) {
				length := int64(1<<31 - 1)
				if len(s) == 3 {
					length = n[2]
				}
				return substringSQL(s[0], n[1], length)
			}))
	}
	def("LEFT", "LEFT(string, integer): the leftmost integer characters of string; empty if integer is not positive",
		resolver("LEFT", "(string, integer)", func(a []types.Type) types.Type { return varcharOf(a[0]).Nullable() }, sigOf(str, integer)),
		strFnN(func(c *Call, s []string, n []int64) (string, bool) {
			if n[1] <= 0 {
				return "", false
			}
			return substringSQL(s[0], 1, n[1])
		}))
	def("RIGHT", "RIGHT(string, integer): the rightmost integer characters of string; empty if integer is not positive",
		resolver("RIGHT", "(string, integer)", func(a []types.Type) types.Type { return varcharOf(a[0]).Nullable() }, sigOf(str, integer)),
		strFnN(func(c *Call, s []string, n []int64) (string, bool) {
			if n[1] <= 0 {
				return "", false
			}
			if n[1] >= int64(utf8.RuneCountInString(s[0])) {
				return s[0], false
			}
			return substringSQL(s[0], -n[1], 1<<31-1)
		}))
	register(&Builtin{
		Name: "TRIM",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 3 || !famStr.accepts(args[0]) || !famStr.accepts(args[1]) || !famStr.accepts(args[2]) {
				return types.Type{}, nil, &ArgError{"TRIM", args, "([BOTH | LEADING | TRAILING] [characters] FROM string)"}
			}
			casts := sigOf(str, str, str).casts(args)
			return nullableIfAny(varcharOf(casts[2]), args), casts, nil
		},
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			spec, _, ok := constString(c, 0)
			if !ok {
				return nil, fmt.Errorf("sql: TRIM needs a constant BOTH, LEADING or TRAILING")
			}
			lead, trail := spec != "TRAILING", spec != "LEADING"
			chars, x := args[1].Str, args[2].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				cs, n1 := chars(r)
				s, n2 := x(r)
				if n1 || n2 {
					return "", true
				}
				return trimChars(s, cs, lead, trail), false
			}}, nil
		}},
		Check: func(c *Call) error {
			spec, _, ok := constString(c, 0)
			if !ok || (spec != "BOTH" && spec != "LEADING" && spec != "TRAILING") {
				return fmt.Errorf("TRIM takes BOTH, LEADING or TRAILING, not %s", c.Args[0])
			}
			return nil
		},
		Doc: "TRIM([BOTH | LEADING | TRAILING] [characters] FROM string): string without the leading and/or trailing characters that are in characters (a space by default)",
	})
	for _, name := range []string{"LTRIM", "RTRIM"} {
		lead := name == "LTRIM"
		side := map[bool]string{true: "leading", false: "trailing"}[lead]
		def(name, name+"(string [, characters]): string without the "+side+" characters that are in characters (a space by default)",
			resolver(name, "(string [, characters])", func(a []types.Type) types.Type { return nullableIfAny(varcharOf(a[0]), a) }, sigOf(str), sigOf(str, str)),
			strFnN(func(c *Call, s []string, _ []int64) (string, bool) {
				chars := " "
				if len(s) == 2 {
					chars = s[1]
				}
				return trimChars(s[0], chars, lead, !lead), false
			}))
	}
	def("REPLACE", "REPLACE(string1, string2, string3): string1 with every (non-overlapping) occurrence of string2 replaced by string3",
		resolver("REPLACE", "three strings", fixed(types.String()), sigOf(str, str, str)),
		strFnN(func(c *Call, s []string, _ []int64) (string, bool) {
			return strings.ReplaceAll(s[0], s[1], s[2]), false
		}))
	def("REPEAT", "REPEAT(string, integer): string repeated integer times; empty if integer is not positive",
		resolver("REPEAT", "(string, integer)", fixed(types.String()), sigOf(str, integer)),
		strFnN(func(c *Call, s []string, n []int64) (string, bool) {
			if n[1] <= 0 || s[0] == "" {
				return "", false
			}
			if n[1] > maxStringResult/int64(len(s[0])) {
				fail(c, "the result would be longer than %d bytes", maxStringResult)
			}
			return strings.Repeat(s[0], int(n[1])), false
		}))
	def("REVERSE", "REVERSE(string): the characters of string in reverse order",
		resolver("REVERSE", "a string", forceNullable(types.String()), sigOf(str)), strFn1(reverse))
	for _, name := range []string{"LPAD", "RPAD"} {
		left := name == "LPAD"
		def(name, name+"(string1, integer, string2): string1 "+map[bool]string{true: "left", false: "right"}[left]+
			"-padded with string2 to integer characters, or cut to integer characters if longer; NULL if integer is negative or string2 empty",
			resolver(name, "(string1, integer, string2)", forceNullable(types.String()), sigOf(str, integer, str)),
			strFnN(func(c *Call, s []string, n []int64) (string, bool) {
				return pad(c, s[0], n[1], s[2], left)
			}))
	}
	def("OVERLAY", "OVERLAY(string1 PLACING string2 FROM integer1 [FOR integer2]): string1 with integer2 characters (the length of string2 by default) from position integer1 replaced by string2",
		resolver("OVERLAY", "(string1 PLACING string2 FROM integer1 [FOR integer2])", func(a []types.Type) types.Type {
			n := int64(varcharOf(a[0]).Length()) + int64(varcharOf(a[1]).Length())
			if n >= types.MaxLength {
				return nullableIfAny(types.String(), a)
			}
			return nullableIfAny(types.VarChar(int(n)), a)
		}, sigOf(str, str, integer), sigOf(str, str, integer, integer)),
		strFnN(func(c *Call, s []string, n []int64) (string, bool) {
			length := int64(utf8.RuneCountInString(s[1]))
			if len(s) == 4 {
				length = n[3]
			}
			return overlay(s[0], s[1], n[2], length), false
		}))
	def("SPLIT_INDEX", "SPLIT_INDEX(string1, string2, integer): the integer-th (from 0) part of string1 split at each occurrence of the separator string2 (or of the character of code string2 if it is an integer); NULL if there is no such part",
		resolver("SPLIT_INDEX", "(string, separator STRING or INT, index INT)", forceNullable(types.String()), sigOf(str, str, integer), sigOf(str, integer, integer)),
		compileSplitIndex)
	def("ASCII", "ASCII(string): the numeric value of the first byte of string; 0 if it is empty",
		resolver("ASCII", "a string", fixed(types.Int()), sigOf(str)),
		intFnStr(func(c *Call, s []string, _ []int64) int64 {
			if s[0] == "" {
				return 0
			}
			return int64(int8(s[0][0]))
		}))
	def("CHR", "CHR(integer): the character of code integer modulo 256; empty if integer is negative",
		resolver("CHR", "an integer", forceNullable(types.String()), sigOf(integer)),
		strFnN(func(c *Call, _ []string, n []int64) (string, bool) {
			if n[0] < 0 {
				return "", false
			}
			return string(rune(n[0] & 0xFF)), false
		}))
}

// toUpper is Java's String.toUpperCase for the special case that matters
// in practice: ß becomes SS.
func toUpper(s string) string {
	u := strings.ToUpper(s)
	if strings.ContainsRune(u, 'ß') {
		u = strings.ReplaceAll(u, "ß", "SS")
	}
	return u
}

// initcap is Calcite's INITCAP: ASCII letters and digits make words.
func initcap(s string) string {
	b := []byte(s)
	start := true
	for i, c := range b {
		isDigit, isUpper, isLower := c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z'
		if start {
			if isLower {
				b[i] = c - 32
			}
			start = !(isDigit || isUpper || isLower)
		} else {
			if isUpper {
				b[i] = c + 32
			}
			start = !(isDigit || isUpper || isLower)
		}
	}
	return string(b)
}

// runeOffset returns the byte offset of the n-th character of s (len(s)
// if s is shorter).
func runeOffset(s string, n int64) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// indexFrom returns the character index of the first occurrence of sub in
// s at or after character from (negative counts as 0), or -1.
func indexFrom(s, sub string, from int64) int64 {
	if from < 0 {
		from = 0
	}
	off := runeOffset(s, from)
	if off == len(s) && from > int64(utf8.RuneCountInString(s)) {
		return -1
	}
	i := strings.Index(s[off:], sub)
	if i < 0 {
		return -1
	}
	return from + int64(utf8.RuneCountInString(s[off:off+i]))
}

// instr is Flink's INSTR.
func instr(s, sub string, start, nth int64) int64 {
	switch {
	case start == 0:
		return 0
	case start > 0:
		idx := int64(0)
		for i := int64(0); i < nth; i++ {
			idx = indexFrom(s, sub, start-1) + 1
			if idx == 0 {
				return 0
			}
			start = idx + 1
		}
		return idx
	}
	pos := instr(reverse(s), reverse(sub), -start, nth)
	if pos == 0 {
		return 0
	}
	return int64(utf8.RuneCountInString(s)) + 2 - pos - int64(utf8.RuneCountInString(sub))
}

// substringSQL is SUBSTRING(s, pos, length) as Flink computes it.
func substringSQL(s string, pos, length int64) (string, bool) {
	if length < 0 {
		return "", true
	}
	if s == "" {
		return "", false
	}
	n := int64(utf8.RuneCountInString(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
		if start >= n {
			return "", false
		}
	case pos < 0:
		start = n + pos
		if start < 0 {
			return "", false
		}
	}
	end := n
	if n-start >= length {
		end = start + length
	}
	if n == int64(len(s)) { // ASCII
		return s[start:end], false
	}
	b := runeOffset(s, start)
	return s[b : b+runeOffset(s[b:], end-start)], false
}

// trimChars removes the leading and/or trailing characters of s that are
// in chars.
func trimChars(s, chars string, lead, trail bool) string {
	if chars == " " {
		if lead {
			s = strings.TrimLeft(s, " ")
		}
		if trail {
			s = strings.TrimRight(s, " ")
		}
		return s
	}
	if lead {
		s = strings.TrimLeft(s, chars)
	}
	if trail {
		s = strings.TrimRight(s, chars)
	}
	return s
}

func reverse(s string) string {
	if s == "" {
		return s
	}
	b := make([]byte, len(s))
	w := len(s)
	for len(s) > 0 {
		_, size := utf8.DecodeRuneInString(s)
		w -= size
		copy(b[w:], s[:size])
		s = s[size:]
	}
	return string(b)
}

// pad is Flink's LPAD and RPAD, on characters.
func pad(c *Call, s string, n int64, p string, left bool) (string, bool) {
	if n < 0 || p == "" {
		return "", true
	}
	if n == 0 {
		return "", false
	}
	if n > maxStringResult/4 {
		fail(c, "the length %d is too large", n)
	}
	base, padding := []rune(s), []rune(p)
	out := make([]rune, n)
	if left {
		fill := max(int(n)-len(base), 0)
		for i := 0; i < fill; i++ {
			out[i] = padding[i%len(padding)]
		}
		copy(out[fill:], base)
	} else {
		k := copy(out, base)
		for i := k; i < int(n); i++ {
			out[i] = padding[(i-k)%len(padding)]
		}
	}
	return string(out), false
}

// overlay is Flink's OVERLAY on characters.
func overlay(s, r string, start, length int64) string {
	n := int64(utf8.RuneCountInString(s))
	if start <= 0 || start > n {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:runeOffset(s, start-1)])
	b.WriteString(r)
	if start+length <= n && length > 0 {
		b.WriteString(s[runeOffset(s, start-1+length):])
	}
	return b.String()
}

func compileSplitIndex(c *Call, args []*Eval) (*Eval, error) {
	x, idx := args[0].Str, args[2].Int
	if args[1].Class() == ClassInt {
		code := args[1].Int
		return &Eval{Str: func(r types.Row) (string, bool) {
			s, n1 := x(r)
			ch, n2 := code(r)
			i, n3 := idx(r)
			if n1 || n2 || n3 || ch > 255 || ch < 1 || i < 0 || s == "" {
				return "", true
			}
			return splitPart(s, string(rune(ch)), i)
		}}, nil
	}
	sep := args[1].Str
	return &Eval{Str: func(r types.Row) (string, bool) {
		s, n1 := x(r)
		sp, n2 := sep(r)
		i, n3 := idx(r)
		if n1 || n2 || n3 || i < 0 || s == "" {
			return "", true
		}
		if sp == "" {
			return splitWhitespacePart(s, i)
		}
		return splitPart(s, sp, i)
	}}, nil
}

// splitPart returns the i-th part of s split at sep, keeping empty parts
// (Apache Commons' splitByWholeSeparatorPreserveAllTokens), without
// allocating.
func splitPart(s, sep string, i int64) (string, bool) {
	for ; i > 0; i-- {
		k := strings.Index(s, sep)
		if k < 0 {
			return "", true
		}
		s = s[k+len(sep):]
	}
	if k := strings.Index(s, sep); k >= 0 {
		return s[:k], false
	}
	return s, false
}

// splitWhitespacePart splits at each whitespace character, keeping empty
// parts, as Commons' splitPreserveAllTokens does for an empty separator.
func splitWhitespacePart(s string, i int64) (string, bool) {
	for ; i > 0; i-- {
		k := strings.IndexFunc(s, unicode.IsSpace)
		if k < 0 {
			return "", true
		}
		_, size := utf8.DecodeRuneInString(s[k:])
		s = s[k+size:]
	}
	if k := strings.IndexFunc(s, unicode.IsSpace); k >= 0 {
		return s[:k], false
	}
	return s, false
}

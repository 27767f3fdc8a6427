package expr

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/eddystream/eddy/sql/types"
)

// The hash functions (MD5, SHA1, SHA2 and its fixed sizes), base64, the
// character set conversions ENCODE and DECODE, and UUID.
func init() {
	text := famText
	hashes := []struct {
		name string
		hexs int
		new  func() hash.Hash
	}{
		{"MD5", 32, md5.New}, {"SHA1", 40, sha1.New}, {"SHA224", 56, sha256.New224},
		{"SHA256", 64, sha256.New}, {"SHA384", 96, sha512.New384}, {"SHA512", 128, sha512.New},
	}
	for _, h := range hashes {
		h := h
		def(h.name, fmt.Sprintf("%s(string): the %s hash of string (its UTF-8 bytes, or the bytes of a binary string) as %d lower-case hexadecimal digits", h.name, h.name, h.hexs),
			resolver(h.name, "a string", fixed(types.Char(h.hexs)), sigOf(text)),
			func(c *Call, args []*Eval) (*Eval, error) {
				hh := h.new()
				return &Eval{Str: hashFn(args[0].Str, func(types.Row) (hash.Hash, bool) { return hh, false })}, nil
			})
	}
	register(&Builtin{
		Name:    "SHA2",
		Resolve: resolver("SHA2", "(string, hashLength INT: 224, 256, 384 or 512)", fixed(types.VarChar(128)), sigOf(text, famInt)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			bits := args[1].Int
			byLen := map[int64]hash.Hash{224: sha256.New224(), 256: sha256.New(), 384: sha512.New384(), 512: sha512.New()}
			return &Eval{Str: hashFn(args[0].Str, func(r types.Row) (hash.Hash, bool) {
				n, null := bits(r)
				if null {
					return nil, true
				}
				h, ok := byLen[n]
				if !ok {
					fail(c, "the hash length %d is not 224, 256, 384 or 512", n)
				}
				return h, false
			})}, nil
		}},
		Check: func(c *Call) error {
			if v, ok := constArg(c, 1); ok && v != nil {
				if n, _ := intOf(v); n != 224 && n != 256 && n != 384 && n != 512 {
					return fmt.Errorf("SHA2: the hash length %d is not 224, 256, 384 or 512", n)
				}
			}
			return nil
		},
		Doc: "SHA2(string, hashLength): the SHA-2 hash (SHA-224, SHA-256, SHA-384 or SHA-512 for hashLength 224, 256, 384 or 512) of string in hexadecimal digits",
	})
	def("TO_BASE64", "TO_BASE64(string): the base64 encoding of string (its UTF-8 bytes, or the bytes of a binary string)",
		resolver("TO_BASE64", "a string", fixed(types.String()), sigOf(text)),
		strFn1(func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }))
	def("FROM_BASE64", "FROM_BASE64(string): the string whose UTF-8 bytes string encodes in base64; an error if it is not base64",
		resolver("FROM_BASE64", "a string", fixed(types.String()), sigOf(text)),
		func(c *Call, args []*Eval) (*Eval, error) {
			x := args[0].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				s, null := x(r)
				if null {
					return "", true
				}
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					fail(c, "%q is not base64: %v", s, err)
				}
				return string(b), false
			}}, nil
		})
	register(&Builtin{
		Name:    "ENCODE",
		Resolve: resolver("ENCODE", "(string, charset)", forceNullable(types.Bytes()), sigOf(famStr, famStr)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			x, cs := args[0].Str, args[1].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				s, n1 := x(r)
				name, n2 := cs(r)
				if n1 || n2 {
					return "", true
				}
				b, err := encodeCharset(s, name)
				if err != nil {
					failErr(c, err)
				}
				return b, false
			}}, nil
		}},
		Check: checkConstString(1, func(s string) error { _, err := encodeCharset("", s); return err }),
		Doc:   "ENCODE(string, charset): the bytes of string in charset ('US-ASCII', 'ISO-8859-1', 'UTF-8', 'UTF-16BE', 'UTF-16LE' or 'UTF-16')",
	})
	register(&Builtin{
		Name:    "DECODE",
		Resolve: resolver("DECODE", "(binary, charset)", forceNullable(types.String()), sigOf(famBin, famStr)),
		Func: &Func{Compile: func(c *Call, args []*Eval) (*Eval, error) {
			x, cs := args[0].Str, args[1].Str
			return &Eval{Str: func(r types.Row) (string, bool) {
				b, n1 := x(r)
				name, n2 := cs(r)
				if n1 || n2 {
					return "", true
				}
				s, err := decodeCharset(b, name)
				if err != nil {
					failErr(c, err)
				}
				return s, false
			}}, nil
		}},
		Check: checkConstString(1, func(s string) error { _, err := decodeCharset("", s); return err }),
		Doc:   "DECODE(binary, charset): the string that binary encodes in charset ('US-ASCII', 'ISO-8859-1', 'UTF-8', 'UTF-16BE', 'UTF-16LE' or 'UTF-16')",
	})
	register(&Builtin{
		Name: "UUID",
		Resolve: func(args []types.Type) (types.Type, []types.Type, error) {
			if len(args) != 0 {
				return types.Type{}, nil, &ArgError{"UUID", args, "no arguments"}
			}
			return types.Char(36).NotNull(), nil, nil
		},
		Func: &Func{Volatile: true, Compile: func(c *Call, args []*Eval) (*Eval, error) {
			return &Eval{Str: func(types.Row) (string, bool) { return newUUID(), false }}, nil
		}},
		Doc: "UUID(): a random (version 4, RFC 4122) UUID as 36 characters, new for every row",
	})
}

// hashFn hashes the strings of x with the hash of the row, into hex.
func hashFn(x func(types.Row) (string, bool), h func(types.Row) (hash.Hash, bool)) func(types.Row) (string, bool) {
	var sum []byte
	return func(r types.Row) (string, bool) {
		s, null := x(r)
		if null {
			return "", true
		}
		hh, null := h(r)
		if null {
			return "", true
		}
		hh.Reset()
		hh.Write([]byte(s))
		sum = hh.Sum(sum[:0])
		return hex.EncodeToString(sum), false
	}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

func charsetName(name string) (string, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	switch n {
	case "US-ASCII", "ISO-8859-1", "UTF-8", "UTF-16BE", "UTF-16LE", "UTF-16":
		return n, nil
	}
	return "", fmt.Errorf("unsupported character set %q: use US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, UTF-16LE or UTF-16", name)
}

// encodeCharset encodes s as Java's String.getBytes(charset) does
// (unmappable characters become '?'; UTF-16 is big-endian with a byte
// order mark).
func encodeCharset(s, name string) (string, error) {
	cs, err := charsetName(name)
	if err != nil {
		return "", err
	}
	var b []byte
	switch cs {
	case "UTF-8":
		return s, nil
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x7f)
		if cs == "ISO-8859-1" {
			limit = 0xff
		}
		for _, r := range s {
			if r > limit {
				r = '?'
			}
			b = append(b, byte(r))
		}
	default:
		var order binary.AppendByteOrder = binary.BigEndian
		if cs == "UTF-16LE" {
			order = binary.LittleEndian
		}
		if cs == "UTF-16" && s != "" {
			b = append(b, 0xfe, 0xff)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			b = order.AppendUint16(b, u)
		}
	}
	return string(b), nil
}

// decodeCharset decodes bytes as Java's new String(bytes, charset) does
// (bad sequences become U+FFFD).
func decodeCharset(b, name string) (string, error) {
	cs, err := charsetName(name)
	if err != nil {
		return "", err
	}
	switch cs {
	case "UTF-8":
		return strings.ToValidUTF8(b, "\uFFFD"), nil
	case "US-ASCII", "ISO-8859-1":
		var sb strings.Builder
		for i := 0; i < len(b); i++ {
			c := b[i]
			if cs == "US-ASCII" && c > 0x7f {
				sb.WriteRune(utf8.RuneError)
				continue
			}
			sb.WriteRune(rune(c))
		}
		return sb.String(), nil
	}
	var order binary.ByteOrder = binary.BigEndian
	if cs == "UTF-16LE" {
		order = binary.LittleEndian
	}
	if cs == "UTF-16" && len(b) >= 2 {
		switch {
		case b[0] == 0xfe && b[1] == 0xff:
			b = b[2:]
		case b[0] == 0xff && b[1] == 0xfe:
			b, order = b[2:], binary.LittleEndian
		}
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u = append(u, order.Uint16([]byte(b[i:i+2])))
	}
	s := string(utf16.Decode(u))
	if len(b)%2 == 1 {
		s += "\uFFFD"
	}
	return s, nil
}

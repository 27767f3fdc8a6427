package connector

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Type is the type of an option's value.
type Type uint8

const (
	// String values are taken as written.
	String Type = iota
	// Int values are decimal integers.
	Int
	// Float values are decimal numbers.
	Float
	// Bool values are true or false.
	Bool
	// Duration values are a number and a unit as Flink writes them ("10 s",
	// "500ms", "1 min", "2h"; a bare number is milliseconds) or a Go
	// duration ("1m30s").
	Duration
	// MemorySize values are a number of bytes with an optional unit ("64mb",
	// "1 gb", "512k").
	MemorySize
	// Enum values are one of the option's Values, compared without regard
	// to case.
	Enum
	// List values are comma-separated strings.
	List
)

var typeNames = [...]string{"string", "int", "float", "bool", "duration", "memory size", "enum", "list"}

// String names the type as the documentation shows it.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Option declares one option of a connector or format.
type Option struct {
	// Key is the option's name, as Flink and Flink CDC users know it
	// ("path", "scan.startup.mode").
	Key string
	// Type is the type of its value.
	Type Type
	// Default is the value used when the option is not set; "" means none.
	Default string
	// Required options must be set (and have no default).
	Required bool
	// Description says what the option does, in a sentence or two.
	Description string
	// Secret options (passwords, tokens) never appear in errors, logs,
	// plans or documentation examples.
	Secret bool
	// Values lists the values an Enum option takes.
	Values []string
	// FallbackKeys are older names of the option that are still accepted.
	FallbackKeys []string
	// Check, if set, validates a value beyond its type (a range, a
	// pattern); its error says what is expected.
	Check func(value string) error
}

// A Key with one '#' declares a family of options, one per name put in
// place of the '#': "fields.#.kind" takes 'fields.id.kind',
// 'fields.name.kind' and so on (Flink's per-column options). Options.Names
// lists the names set; the factory checks them (against a table's columns,
// say). Such an option cannot be required, and its Default applies to
// every name.

// wildcard splits a family's key around its '#'.
func (o *Option) wildcard() (prefix, suffix string, ok bool) {
	return strings.Cut(o.Key, "#")
}

// matches reports whether key is an option of the family o, and the name
// in place of its '#'.
func (o *Option) matches(key string) (string, bool) {
	pre, suf, ok := o.wildcard()
	if !ok || len(key) <= len(pre)+len(suf) || !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, suf) {
		return "", false
	}
	return key[len(pre) : len(key)-len(suf)], true
}

// Kind says what a registered factory makes.
type Kind uint8

const (
	// SourceKind factories make sources (SourceFactory).
	SourceKind Kind = 1 << iota
	// SinkKind factories make sinks (SinkFactory).
	SinkKind
	// FormatKind factories make decoders and encoders (FormatFactory).
	FormatKind
)

// String names the kinds: "source", "sink", "source, sink", "format".
func (k Kind) String() string {
	var parts []string
	if k&SourceKind != 0 {
		parts = append(parts, "source")
	}
	if k&SinkKind != 0 {
		parts = append(parts, "sink")
	}
	if k&FormatKind != 0 {
		parts = append(parts, "format")
	}
	return strings.Join(parts, ", ")
}

// Spec describes a connector or format: its name, what it makes, and its
// options. It is the one source of validation, error messages and
// documentation.
type Spec struct {
	// Name is the value of 'connector' (or 'format') that selects it.
	Name string
	// Kind says what it makes.
	Kind Kind
	// Description says what it reads or writes, in a sentence or two.
	Description string
	// Options declares its options.
	Options []Option
	// Formats, for a connector that takes a 'format' option, lists the
	// formats it supports; options prefixed with the chosen format's name
	// ("json.ignore-parse-errors") go to that format.
	Formats []string
}

// FormatKey is the option that names the format of connectors that take
// one.
const FormatKey = "format"

// option returns the declaration of key (or of a key that falls back to
// it).
func (s *Spec) option(key string) (*Option, bool) {
	for i := range s.Options {
		o := &s.Options[i]
		if o.Key == key || slices.Contains(o.FallbackKeys, key) {
			return o, true
		}
	}
	for i := range s.Options {
		if _, ok := s.Options[i].matches(key); ok {
			return &s.Options[i], true
		}
	}
	return nil, false
}

// check reports a mistake in the spec itself: a programming error.
func (s *Spec) check() error {
	if s.Name == "" {
		return fmt.Errorf("connector: a spec has no name")
	}
	seen := map[string]bool{}
	for _, o := range s.Options {
		for _, k := range append([]string{o.Key}, o.FallbackKeys...) {
			if k == "" || seen[k] {
				return fmt.Errorf("connector %q: option %q is empty or declared twice", s.Name, k)
			}
			seen[k] = true
		}
		if _, _, wild := o.wildcard(); wild && (o.Required || len(o.FallbackKeys) > 0 || strings.Count(o.Key, "#") > 1) {
			return fmt.Errorf("connector %q: option family %q has one '#' and is neither required nor has fallback keys", s.Name, o.Key)
		}
		if o.Required && o.Default != "" {
			return fmt.Errorf("connector %q: option %q is required and has a default", s.Name, o.Key)
		}
		if o.Type == Enum && len(o.Values) == 0 {
			return fmt.Errorf("connector %q: enum option %q lists no values", s.Name, o.Key)
		}
		if o.Default != "" {
			if _, err := parseValue(&o, o.Default); err != nil {
				return fmt.Errorf("connector %q: default of option %q: %w", s.Name, o.Key, err)
			}
		}
	}
	if len(s.Formats) > 0 && seen[FormatKey] {
		return fmt.Errorf("connector %q: declares the %q option itself and lists formats", s.Name, FormatKey)
	}
	return nil
}

// OptionError is a mistake in the options a user gave a connector or
// format. Its message names the option and says how to fix it; it never
// contains the value of a secret option.
type OptionError struct {
	// Connector is the name of the connector or format.
	Connector string
	// Key is the option at fault.
	Key string
	// Problem says what is wrong and how to fix it.
	Problem string
}

// Error renders the mistake.
func (e *OptionError) Error() string {
	return fmt.Sprintf("connector %q: option '%s' %s", e.Connector, e.Key, e.Problem)
}

// Options are options validated against a Spec, with defaults applied.
type Options struct {
	spec   *Spec
	values map[string]string // by canonical key, defaults included
	set    map[string]bool   // canonical keys the user set
	format map[string]string // options of the format, prefix removed
	// formatSpec is the spec of the chosen format, once a registry has
	// validated the format's options; Redacted hides its secrets.
	formatSpec *Spec
}

// Validate checks the options a user wrote against the spec: every key
// known (with a suggestion for a misspelt one), every required option set,
// every value of its type. It returns the options with defaults applied.
func (s *Spec) Validate(options map[string]string) (Options, error) {
	return s.validate(options, s.Name, "")
}

// validate is Validate with the errors naming owner as the connector and
// the keys with prefix: the options of a format as the user of a connector
// writes them ("json.fail-on-missing-field").
func (s *Spec) validate(options map[string]string, owner, prefix string) (Options, error) {
	o := Options{spec: s, values: map[string]string{}, set: map[string]bool{}, format: map[string]string{}}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var format string
	if len(s.Formats) > 0 {
		format = options[FormatKey]
		if format == "" {
			return o, &OptionError{owner, prefix + FormatKey, fmt.Sprintf("is required: set it to one of %s", strings.Join(s.Formats, ", "))}
		}
		if !slices.Contains(s.Formats, format) {
			return o, &OptionError{owner, prefix + FormatKey, fmt.Sprintf("= '%s' is not a format this connector supports; use one of %s", format, strings.Join(s.Formats, ", "))}
		}
	}
	for _, k := range keys {
		v := options[k]
		if len(s.Formats) > 0 {
			if k == FormatKey {
				continue
			}
			if rest, ok := strings.CutPrefix(k, format+"."); ok {
				o.format[rest] = v
				continue
			}
		}
		decl, ok := s.option(k)
		if !ok {
			return o, &OptionError{owner, prefix + k, s.unknownHint(k, prefix)}
		}
		canon := decl.Key
		if _, wild := decl.matches(k); wild {
			canon = k
		}
		if o.set[canon] {
			return o, &OptionError{owner, prefix + canon, fmt.Sprintf("is set twice (also as '%s'); keep one", prefix+k)}
		}
		if _, err := parseValue(decl, v); err != nil {
			return o, &OptionError{owner, prefix + canon, describeBad(decl, v, err)}
		}
		o.values[canon] = v
		o.set[canon] = true
	}
	for _, decl := range s.Options {
		if _, _, wild := decl.wildcard(); wild || o.set[decl.Key] {
			continue
		}
		if decl.Required {
			return o, &OptionError{owner, prefix + decl.Key, fmt.Sprintf("is required: %s", lowerFirst(decl.Description))}
		}
		if decl.Default != "" {
			o.values[decl.Key] = decl.Default
		}
	}
	if format != "" {
		o.values[FormatKey] = format
		o.set[FormatKey] = true
	}
	return o, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return "set it"
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// describeBad says why v is not a valid value of decl, without showing a
// secret value.
func describeBad(decl *Option, v string, err error) string {
	shown := fmt.Sprintf("'%s'", v)
	if decl.Secret {
		shown = "(secret)"
	}
	switch decl.Type {
	case Enum:
		return fmt.Sprintf("= %s is not one of %s", shown, strings.Join(decl.Values, ", "))
	}
	msg := err.Error()
	if decl.Secret && strings.TrimSpace(v) != "" {
		// A Check that quotes the value must not reveal it.
		msg = strings.ReplaceAll(msg, v, "******")
		msg = strings.ReplaceAll(msg, strings.TrimSpace(v), "******")
	}
	return fmt.Sprintf("= %s: %s", shown, msg)
}

// unknownHint says that key is unknown, suggests the nearest known key, and
// lists the valid ones, each written with prefix.
func (s *Spec) unknownHint(key, prefix string) string {
	var valid []string
	best, bestD := "", 3
	for _, o := range s.Options {
		valid = append(valid, prefix+o.Key)
		cand := o.Key
		if pre, suf, wild := o.wildcard(); wild && strings.HasPrefix(key, pre) {
			// Suggest the family's key with the name the user wrote.
			name, _, _ := strings.Cut(key[len(pre):], ".")
			cand = pre + name + suf
		}
		if d := editDistance(key, cand); d < bestD {
			best, bestD = prefix+cand, d
		}
	}
	if len(s.Formats) > 0 {
		valid = append(valid, prefix+FormatKey)
	}
	sort.Strings(valid)
	msg := "is unknown"
	if best != "" {
		msg += fmt.Sprintf(" (did you mean '%s'?)", best)
	}
	if len(valid) == 0 {
		return msg + "; this connector takes no options"
	}
	return msg + "; valid options are " + strings.Join(valid, ", ")
}

// Nearest returns the candidate nearest to word, for a "did you mean"
// hint of an error about an unknown name: one at most two edits (letters
// added, removed or changed) away, or false if none is.
func Nearest(word string, candidates []string) (string, bool) {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// parseValue parses v as a value of decl's type and checks it.
func parseValue(decl *Option, v string) (any, error) {
	var out any
	var err error
	s := strings.TrimSpace(v)
	switch decl.Type {
	case String:
		out = v
	case Int:
		out, err = strconv.ParseInt(s, 10, 64)
		if err != nil {
			err = fmt.Errorf("not an integer")
		}
	case Float:
		var f float64
		f, err = strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			err = fmt.Errorf("not a number")
		}
		out = f
	case Bool:
		switch strings.ToLower(s) {
		case "true":
			out = true
		case "false":
			out = false
		default:
			err = fmt.Errorf("not true or false")
		}
	case Duration:
		out, err = ParseDuration(s)
	case MemorySize:
		out, err = ParseMemorySize(s)
	case Enum:
		out = ""
		for _, e := range decl.Values {
			if strings.EqualFold(e, s) {
				out = e
			}
		}
		if out == "" {
			err = fmt.Errorf("not one of %s", strings.Join(decl.Values, ", "))
		}
	case List:
		var parts []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		out = parts
	default:
		err = fmt.Errorf("unknown option type %v", decl.Type)
	}
	if err == nil && decl.Check != nil {
		err = decl.Check(v)
	}
	return out, err
}

// ParseDuration parses a duration as Flink writes them: a number and an
// optional unit (ms, s, sec, min, h, d and their long forms; milliseconds
// when there is none), or as Go writes them ("1m30s").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return d, nil
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("not a duration; write a number and a unit, e.g. '10 s', '500 ms', '5 min'")
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q is out of range", s)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	var u time.Duration
	switch unit {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		u = time.Millisecond
	case "s", "sec", "secs", "second", "seconds":
		u = time.Second
	case "m", "min", "mins", "minute", "minutes":
		u = time.Minute
	case "h", "hour", "hours":
		u = time.Hour
	case "d", "day", "days":
		u = 24 * time.Hour
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		u = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		u = time.Nanosecond
	default:
		return 0, fmt.Errorf("unknown time unit %q; use ms, s, min, h or d", unit)
	}
	if n > math.MaxInt64/int64(u) {
		return 0, fmt.Errorf("duration %q is out of range", s)
	}
	return time.Duration(n) * u, nil
}

// ParseMemorySize parses a number of bytes with an optional unit (b, k/kb,
// m/mb, g/gb, t/tb, with or without a space; units are powers of 1024).
func ParseMemorySize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("not a memory size; write a number and a unit, e.g. '64 mb'")
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory size %q is out of range", s)
	}
	var shift uint
	switch strings.ToLower(strings.TrimSpace(s[i:])) {
	case "", "b", "bytes":
	case "k", "kb", "kib", "kibibytes":
		shift = 10
	case "m", "mb", "mib", "mebibytes":
		shift = 20
	case "g", "gb", "gib", "gibibytes":
		shift = 30
	case "t", "tb", "tib", "tebibytes":
		shift = 40
	default:
		return 0, fmt.Errorf("unknown memory unit in %q; use b, kb, mb, gb or tb", s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("memory size %q is out of range", s)
	}
	return n << shift, nil
}

// IsSet reports whether the user set the option key (rather than it taking
// its default).
func (o Options) IsSet(key string) bool { o.decl(key); return o.set[key] }

// decl returns the declaration of key; asking for an undeclared option is a
// programming error.
func (o Options) decl(key string) *Option {
	if key == FormatKey && len(o.spec.Formats) > 0 {
		return &Option{Key: FormatKey, Type: String}
	}
	d, ok := o.spec.option(key)
	if !ok {
		panic(fmt.Sprintf("connector %q: option %q is not declared in its spec", o.spec.Name, key))
	}
	return d
}

func (o Options) parsed(key string, t Type) any {
	d := o.decl(key)
	if d.Type != t && !(t == String && (d.Type == Enum || d.Type == String)) {
		panic(fmt.Sprintf("connector %q: option %q is a %v, not a %v", o.spec.Name, key, d.Type, t))
	}
	v, ok := o.values[key]
	if !ok {
		if _, wild := d.matches(key); !wild || d.Default == "" {
			return nil
		}
		v = d.Default
	}
	out, err := parseValue(d, v)
	if err != nil {
		panic(fmt.Sprintf("connector %q: option %q was validated but does not parse: %v", o.spec.Name, key, err))
	}
	return out
}

// String returns the value of a string or enum option (an enum value as its
// spec spells it), or "" if it is not set and has no default.
func (o Options) String(key string) string {
	v, _ := o.parsed(key, String).(string)
	return v
}

// Int returns the value of an integer option, 0 if unset without default.
func (o Options) Int(key string) int64 { v, _ := o.parsed(key, Int).(int64); return v }

// Float returns the value of a float option, 0 if unset without default.
func (o Options) Float(key string) float64 { v, _ := o.parsed(key, Float).(float64); return v }

// Bool returns the value of a bool option, false if unset without default.
func (o Options) Bool(key string) bool { v, _ := o.parsed(key, Bool).(bool); return v }

// Duration returns the value of a duration option, 0 if unset without
// default.
func (o Options) Duration(key string) time.Duration {
	v, _ := o.parsed(key, Duration).(time.Duration)
	return v
}

// MemorySize returns the value of a memory-size option in bytes, 0 if unset
// without default.
func (o Options) MemorySize(key string) int64 {
	v, _ := o.parsed(key, MemorySize).(int64)
	return v
}

// List returns the values of a list option.
func (o Options) List(key string) []string { v, _ := o.parsed(key, List).([]string); return v }

// Names returns the names set in place of the '#' of the option family
// key ("fields.#.kind"), sorted.
func (o Options) Names(key string) []string {
	d := o.decl(key)
	var out []string
	for k := range o.set {
		if n, ok := d.matches(k); ok && d.Key == key {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Format returns the chosen format and its options (the keys that began
// with its name and a dot, with that prefix removed).
func (o Options) Format() (name string, options map[string]string) {
	return o.values[FormatKey], o.format
}

// Redacted returns the options as set, with the values of secret options
// replaced by "******", for logs and plans.
func (o Options) Redacted() map[string]string {
	out := map[string]string{}
	for k, v := range o.values {
		if d, ok := o.spec.option(k); ok && d.Secret {
			v = "******"
		}
		out[k] = v
	}
	name, f := o.Format()
	for k, v := range f {
		if o.formatSpec != nil {
			if d, ok := o.formatSpec.option(k); ok && d.Secret {
				v = "******"
			}
		}
		out[name+"."+k] = v
	}
	return out
}

// Spec returns the spec the options were validated against.
func (o Options) Spec() *Spec { return o.spec }

// Positive is an Option.Check for options whose value is a whole number
// greater than 0.
func Positive(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || n <= 0 {
		return fmt.Errorf("want a positive number")
	}
	return nil
}

// NonNegative is an Option.Check for options whose value is a whole number,
// 0 or more.
func NonNegative(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || n < 0 {
		return fmt.Errorf("want a number, 0 or more")
	}
	return nil
}

// PortNumber is an Option.Check for options whose value is a TCP port.
func PortNumber(v string) error {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("want a port number from 1 to 65535")
	}
	return nil
}

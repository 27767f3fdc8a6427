package connectortest

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/eddystream/eddy/connector"
)

// OptionsCase describes a registered connector or format to RunOptions.
type OptionsCase struct {
	// Registry is where it is registered; nil means connector.Default.
	Registry *connector.Registry
	// Name is the name it is registered under.
	Name string
	// Format marks a format; otherwise Name is a connector.
	Format bool
	// Valid is a set of options that opens it (with every required option,
	// and the 'format' of a connector that takes one).
	Valid map[string]string
}

// wrongValues are values of no option type but String and List.
var wrongValues = map[connector.Type]string{
	connector.Int:        "not-a-number",
	connector.Float:      "not-a-number",
	connector.Bool:       "perhaps",
	connector.Duration:   "10 fortnights",
	connector.MemorySize: "12 parsecs",
	connector.Enum:       "no-such-value",
}

// secretValue is what the suite sets secret options to, to look for it in
// errors.
const secretValue = "conformance-secret-7f3a9c"

// RunOptions checks the errors that the options of a registered connector
// or format give, opening it for records of type T through the registry
// (OpenSource and OpenSink as its kind says, or OpenDecoder and
// OpenEncoder): Valid must open; and each of these must fail with an error
// that names the option at fault:
//
//   - a value of the wrong type for each option (a word for a number, a
//     bool, a duration, a memory size; a value outside an enum);
//   - each required option left out;
//   - each option's key misspelt, the error suggesting the right key;
//   - for a connector that takes a format: no format, an unknown format,
//     and the same mistakes in the options of each format it supports,
//     written with the format's prefix ("json.fail-on-missing-field").
//
// It also checks that the value of a secret option appears in no error,
// nor in Options.Redacted.
func RunOptions[T any](t *testing.T, c OptionsCase) {
	t.Helper()
	reg := c.Registry
	if reg == nil {
		reg = connector.Default
	}
	var f connector.Factory
	var err error
	if c.Format {
		f, err = reg.Format(c.Name)
	} else {
		f, err = reg.Connector(c.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	spec := f.Spec()
	if c.Valid == nil {
		c.Valid = map[string]string{}
	}
	o := &optionSuite[T]{reg: reg, name: c.Name, spec: spec, valid: c.Valid}
	t.Run("valid", func(t *testing.T) {
		if err := o.open(c.Valid); err != nil {
			t.Fatalf("the case's valid options do not open %q: %v", c.Name, err)
		}
	})
	o.checkSpec(t, spec, "", c.Valid)
	if len(spec.Formats) == 0 {
		return
	}
	t.Run("format missing", func(t *testing.T) {
		opts := maps.Clone(c.Valid)
		delete(opts, connector.FormatKey)
		o.mustName(t, opts, connector.FormatKey)
	})
	t.Run("format unknown", func(t *testing.T) {
		opts := maps.Clone(c.Valid)
		opts[connector.FormatKey] = "no-such-format"
		o.mustName(t, opts, connector.FormatKey)
	})
	for _, name := range spec.Formats {
		ff, err := reg.Format(name)
		if err != nil {
			t.Errorf("connector %q lists format %q, which is not registered: %v", c.Name, name, err)
			continue
		}
		base := maps.Clone(c.Valid)
		base[connector.FormatKey] = name
		t.Run("format "+name, func(t *testing.T) {
			o.checkSpec(t, ff.Spec(), name+".", base)
		})
	}
}

type optionSuite[T any] struct {
	reg   *connector.Registry
	name  string
	spec  connector.Spec
	valid map[string]string
}

// open opens the connector or format with options in every way its kind
// allows, and returns the first error.
func (o *optionSuite[T]) open(options map[string]string) error {
	var errs []error
	k := o.spec.Kind
	if k&connector.FormatKind != 0 {
		_, err := connector.OpenDecoder[T](o.reg, o.name, options)
		errs = append(errs, err)
		_, err = connector.OpenEncoder[T](o.reg, o.name, options)
		errs = append(errs, err)
	}
	if k&connector.SourceKind != 0 {
		_, err := connector.OpenSource[T](o.reg, o.name, options)
		errs = append(errs, err)
	}
	if k&connector.SinkKind != 0 {
		_, err := connector.OpenSink[T](o.reg, o.name, options)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// mustName checks that options fail to open, each way, with an error that
// names key; if the error is an OptionError, its Key must be key.
func (o *optionSuite[T]) mustName(t *testing.T, options map[string]string, key string, also ...string) {
	t.Helper()
	var errs []error
	k := o.spec.Kind
	if k&connector.FormatKind != 0 {
		_, err := connector.OpenDecoder[T](o.reg, o.name, options)
		errs = append(errs, wrapWay("OpenDecoder", err))
		_, err = connector.OpenEncoder[T](o.reg, o.name, options)
		errs = append(errs, wrapWay("OpenEncoder", err))
	}
	if k&connector.SourceKind != 0 {
		_, err := connector.OpenSource[T](o.reg, o.name, options)
		errs = append(errs, wrapWay("OpenSource", err))
	}
	if k&connector.SinkKind != 0 {
		_, err := connector.OpenSink[T](o.reg, o.name, options)
		errs = append(errs, wrapWay("OpenSink", err))
	}
	for _, err := range errs {
		var way *wayError
		errors.As(err, &way)
		if way.err == nil {
			t.Errorf("%s(%q, %v) succeeded; want an error naming option '%s'", way.way, o.name, redactFor(options), key)
			continue
		}
		msg := way.err.Error()
		if !strings.Contains(msg, key) {
			t.Errorf("%s(%q, %v): the error does not name option '%s': %v", way.way, o.name, redactFor(options), key, msg)
		}
		var oe *connector.OptionError
		if errors.As(way.err, &oe) && oe.Key != key {
			t.Errorf("%s(%q, %v): the OptionError's Key is %q, want %q: %v", way.way, o.name, redactFor(options), oe.Key, key, msg)
		}
		for _, a := range also {
			if !strings.Contains(msg, a) {
				t.Errorf("%s(%q, %v): the error does not say %q: %v", way.way, o.name, redactFor(options), a, msg)
			}
		}
		if strings.Contains(msg, secretValue) {
			t.Errorf("%s(%q): the error shows the value of a secret option: %v", way.way, o.name, msg)
		}
	}
}

// wayError is the error of one way of opening, or a nil err when it
// succeeded.
type wayError struct {
	way string
	err error
}

func (w *wayError) Error() string { return fmt.Sprintf("%s: %v", w.way, w.err) }

func wrapWay(way string, err error) error { return &wayError{way, err} }

// redactFor renders options for a test message without the secret value.
func redactFor(options map[string]string) string {
	return strings.ReplaceAll(fmt.Sprint(options), secretValue, "******")
}

// checkSpec checks the mistakes of every option of spec, written with
// prefix, starting from the valid options base.
func (o *optionSuite[T]) checkSpec(t *testing.T, spec connector.Spec, prefix string, base map[string]string) {
	t.Helper()
	for _, opt := range spec.Options {
		key := prefix + opt.Key
		if bad, ok := wrongValues[opt.Type]; ok {
			t.Run("wrong type "+key, func(t *testing.T) {
				opts := maps.Clone(base)
				for _, fb := range opt.FallbackKeys {
					delete(opts, prefix+fb)
				}
				opts[key] = bad
				o.mustName(t, opts, key)
			})
		}
		if opt.Required {
			t.Run("missing "+key, func(t *testing.T) {
				opts := maps.Clone(base)
				if _, ok := opts[key]; !ok {
					t.Fatalf("the case's valid options lack the required option '%s'", key)
				}
				delete(opts, key)
				for _, fb := range opt.FallbackKeys {
					delete(opts, prefix+fb)
				}
				o.mustName(t, opts, key, "required")
			})
		}
		wrong := prefix + misspell(opt.Key)
		t.Run("misspelt "+key, func(t *testing.T) {
			opts := maps.Clone(base)
			v, ok := opts[key]
			if !ok {
				v = opt.Default
			}
			delete(opts, key)
			opts[wrong] = v
			o.mustName(t, opts, wrong, fmt.Sprintf("did you mean '%s'", key))
		})
		if opt.Secret {
			t.Run("secret "+key, func(t *testing.T) {
				opts := maps.Clone(base)
				opts[key] = secretValue
				if _, ok := wrongValues[opt.Type]; ok {
					// The secret itself is of the wrong type.
					o.mustName(t, opts, key)
				}
				// Another mistake next to the secret.
				opts[prefix+"no-such-option"] = "x"
				o.mustName(t, opts, prefix+"no-such-option")
				if prefix == "" {
					valid := maps.Clone(base)
					valid[key] = secretValue
					if v, err := spec.Validate(valid); err == nil {
						if r := fmt.Sprint(v.Redacted()); strings.Contains(r, secretValue) {
							t.Errorf("Options.Redacted shows the value of the secret option '%s': %s", key, r)
						}
					}
				}
			})
		}
	}
}

// misspell returns key with a letter of its middle left out.
func misspell(key string) string {
	if len(key) < 3 {
		return key + "x"
	}
	i := len(key) / 2
	return key[:i] + key[i+1:]
}

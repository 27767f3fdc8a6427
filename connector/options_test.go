package connector_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddystream/eddy/connector"
)

// spec has an option of every type.
var spec = connector.Spec{
	Name: "kafka-ish", Kind: connector.SourceKind,
	Description: "A connector for the tests.",
	Formats:     []string{"json", "csv"},
	Options: []connector.Option{
		{Key: "topic", Type: connector.String, Required: true, Description: "The topic to read."},
		{Key: "properties.bootstrap.servers", Type: connector.List, Description: "Brokers."},
		{Key: "scan.startup.mode", Type: connector.Enum, Default: "group-offsets",
			Values: []string{"earliest-offset", "latest-offset", "group-offsets"}, Description: "Where to start."},
		{Key: "scan.partition.discovery.interval", Type: connector.Duration, Default: "5 min",
			FallbackKeys: []string{"scan.topic-partition-discovery.interval"}, Description: "How often to look for partitions."},
		{Key: "sink.buffer-flush.max-size", Type: connector.MemorySize, Default: "2mb", Description: "Buffer size."},
		{Key: "sink.parallelism", Type: connector.Int, Description: "Sink parallelism.",
			Check: func(v string) error {
				if strings.HasPrefix(strings.TrimSpace(v), "-") {
					return errors.New("must not be negative")
				}
				return nil
			}},
		{Key: "ratio", Type: connector.Float, Default: "0.25", Description: "A ratio."},
		{Key: "strict", Type: connector.Bool, Default: "false", Description: "Strictness."},
		{Key: "properties.sasl.password", Type: connector.String, Secret: true, Description: "The password."},
		{Key: "pin", Type: connector.Int, Secret: true, Description: "A numeric secret."},
	},
}

func mustValidate(t *testing.T, options map[string]string) connector.Options {
	t.Helper()
	o, err := spec.Validate(options)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestValidateAppliesDefaultsAndParsesEveryType(t *testing.T) {
	o := mustValidate(t, map[string]string{
		"topic": "orders", "format": "json",
		"properties.bootstrap.servers": " a:9092, b:9092,,",
		"scan.startup.mode":            "EARLIEST-Offset",
		"sink.parallelism":             " 4 ",
		"strict":                       "TRUE",
		"json.fail-on-missing-field":   "true",
	})
	if got := o.String("topic"); got != "orders" {
		t.Errorf("topic = %q", got)
	}
	if got := o.List("properties.bootstrap.servers"); !reflect.DeepEqual(got, []string{"a:9092", "b:9092"}) {
		t.Errorf("servers = %q", got)
	}
	if got := o.String("scan.startup.mode"); got != "earliest-offset" {
		t.Errorf("an enum value is compared without case and returned as the spec spells it; got %q", got)
	}
	if got := o.Duration("scan.partition.discovery.interval"); got != 5*time.Minute {
		t.Errorf("default duration = %v", got)
	}
	if got := o.MemorySize("sink.buffer-flush.max-size"); got != 2<<20 {
		t.Errorf("default memory size = %d", got)
	}
	if got := o.Int("sink.parallelism"); got != 4 {
		t.Errorf("int = %d", got)
	}
	if got := o.Float("ratio"); got != 0.25 {
		t.Errorf("float = %v", got)
	}
	if !o.Bool("strict") {
		t.Error("bool TRUE is not true")
	}
	if !o.IsSet("strict") || o.IsSet("ratio") {
		t.Error("IsSet does not tell the options set from the defaults")
	}
	if o.Int("pin") != 0 || o.String("properties.sasl.password") != "" {
		t.Error("an unset option without default is not the zero value")
	}
	name, fopts := o.Format()
	if name != "json" || !reflect.DeepEqual(fopts, map[string]string{"fail-on-missing-field": "true"}) {
		t.Errorf("format %q %v", name, fopts)
	}
	if o.Spec().Name != spec.Name {
		t.Error("Options.Spec is not the spec")
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10 s": 10 * time.Second, "500ms": 500 * time.Millisecond, "1 min": time.Minute, "2h": 2 * time.Hour,
		"100": 100 * time.Millisecond, "1m30s": 90 * time.Second, "3 d": 72 * time.Hour, "7 seconds": 7 * time.Second,
		"250 us": 250 * time.Microsecond, "5 MIN": 5 * time.Minute, "0": 0, " 2 hours ": 2 * time.Hour,
	} {
		got, err := connector.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "10 fortnights", "-5s", "1.5 s", "99999999999999999999 ms", "9999999999 d"} {
		if d, err := connector.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v; want an error", in, d)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	for in, want := range map[string]int64{
		"64mb": 64 << 20, "1 gb": 1 << 30, "512k": 512 << 10, "100": 100, "100 bytes": 100, "3 MiB": 3 << 20,
		"2 tb": 2 << 40, "7b": 7,
	} {
		got, err := connector.ParseMemorySize(in)
		if err != nil || got != want {
			t.Errorf("ParseMemorySize(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "12 parsecs", "1.5gb", "-1mb", "99999999 tb"} {
		if n, err := connector.ParseMemorySize(in); err == nil {
			t.Errorf("ParseMemorySize(%q) = %v; want an error", in, n)
		}
	}
}

// optionError validates options and returns the OptionError it must give.
func optionError(t *testing.T, options map[string]string) *connector.OptionError {
	t.Helper()
	_, err := spec.Validate(options)
	var oe *connector.OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("Validate(%v) = %v; want an OptionError", options, err)
	}
	if oe.Connector != spec.Name || !strings.Contains(err.Error(), "'"+oe.Key+"'") {
		t.Errorf("the error does not name the connector and the option: %v", err)
	}
	return oe
}

func TestValidateErrorsNameTheOption(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{"topic": "t", "format": "json"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		options  map[string]string
		key      string
		contains string
	}{
		{base("sink.parallelism", "four"), "sink.parallelism", "not an integer"},
		{base("sink.parallelism", "-1"), "sink.parallelism", "must not be negative"},
		{base("ratio", "half"), "ratio", "not a number"},
		{base("ratio", "NaN"), "ratio", "not a number"},
		{base("strict", "yes"), "strict", "not true or false"},
		{base("scan.partition.discovery.interval", "10 fortnights"), "scan.partition.discovery.interval", "unknown time unit"},
		{base("sink.buffer-flush.max-size", "12 parsecs"), "sink.buffer-flush.max-size", "unknown memory unit"},
		{base("scan.startup.mode", "beginning"), "scan.startup.mode", "earliest-offset, latest-offset, group-offsets"},
		{map[string]string{"format": "json"}, "topic", "is required: the topic to read"},
		{base("scan.startup.mod", "earliest-offset"), "scan.startup.mod", "did you mean 'scan.startup.mode'?"},
		{base("tpic", "x"), "tpic", "valid options are format, pin, properties.bootstrap.servers"},
		{base("zzzzzzzzzzzz", "x"), "zzzzzzzzzzzz", "is unknown; valid options"},
		{base("scan.topic-partition-discovery.interval", "1 s", "scan.partition.discovery.interval", "2 s"),
			"scan.partition.discovery.interval", "is set twice"},
		{map[string]string{"topic": "t"}, "format", "is required: set it to one of json, csv"},
		{base("format", "avro"), "format", "'avro' is not a format this connector supports; use one of json, csv"},
		{base("csv.field-delimiter", ";"), "csv.field-delimiter", "is unknown"},
	} {
		oe := optionError(t, c.options)
		if oe.Key != c.key || !strings.Contains(oe.Error(), c.contains) {
			t.Errorf("Validate(%v) = %v; want an error about %q saying %q", c.options, oe, c.key, c.contains)
		}
	}
}

func TestFallbackKeys(t *testing.T) {
	o := mustValidate(t, map[string]string{"topic": "t", "format": "csv", "scan.topic-partition-discovery.interval": "30 s"})
	if got := o.Duration("scan.partition.discovery.interval"); got != 30*time.Second {
		t.Errorf("the value set with the fallback key is not the option's: %v", got)
	}
	if !o.IsSet("scan.partition.discovery.interval") {
		t.Error("an option set with its fallback key is not set")
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	const pw = "hunter2-very-secret"
	o := mustValidate(t, map[string]string{"topic": "t", "format": "json", "properties.sasl.password": pw, "json.x": "1"})
	r := o.Redacted()
	if r["properties.sasl.password"] != "******" || r["topic"] != "t" || r["json.x"] != "1" {
		t.Errorf("Redacted() = %v", r)
	}
	if o.String("properties.sasl.password") != pw {
		t.Error("the secret's value is not available to the connector")
	}
	for _, options := range []map[string]string{
		{"topic": "t", "format": "json", "pin": pw},
		{"topic": "t", "format": "json", "pin": " " + pw + " "},
	} {
		_, err := spec.Validate(options)
		if err == nil || strings.Contains(err.Error(), pw) || !strings.Contains(err.Error(), "'pin'") {
			t.Errorf("a bad secret value gives %v; want an error naming 'pin' without the value", err)
		}
	}
	// A check that quotes the value does not reveal it either.
	leaky := connector.Spec{Name: "leaky", Kind: connector.SourceKind, Options: []connector.Option{{
		Key: "token", Type: connector.String, Secret: true,
		Check: func(v string) error { return errors.New("token " + v + " has expired") },
	}}}
	_, err := leaky.Validate(map[string]string{"token": pw})
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("a failed check of a secret gives %v; want an error without the value", err)
	}
}

func TestAccessorsPanicOnProgrammingErrors(t *testing.T) {
	o := mustValidate(t, map[string]string{"topic": "t", "format": "json"})
	for name, f := range map[string]func(){
		"undeclared":  func() { o.String("no.such.option") },
		"wrong type":  func() { o.Int("topic") },
		"bool of int": func() { o.Bool("sink.parallelism") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestTypeAndKindNames(t *testing.T) {
	if connector.MemorySize.String() != "memory size" || connector.Type(99).String() != "Type(99)" {
		t.Error("Type.String")
	}
	if (connector.SourceKind|connector.SinkKind).String() != "source, sink" || connector.FormatKind.String() != "format" {
		t.Error("Kind.String")
	}
}

package formats

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/eddystream/eddy/changelog"
	"github.com/eddystream/eddy/connector"
)

// avroConfluentSpec is the spec of the "avro-confluent" format.
var avroConfluentSpec = connector.Spec{
	Name: "avro-confluent",
	Kind: connector.FormatKind,
	Description: "Avro binary in Confluent's wire format (a 0 byte, the 4-byte big-endian schema id, the record), for SQL tables: " +
		"a reader fetches each writer's schema from a Confluent schema registry by its id and resolves it against the table's columns (Avro schema evolution); " +
		"a writer registers the schema derived from the table's columns under 'avro-confluent.subject'. Insertions only; docs/formats.md describes it.",
	Options: []connector.Option{
		{Key: "url", Type: connector.String, FallbackKeys: []string{"schema-registry.url"},
			Description: "Required: the URL of the Confluent schema registry ('http://registry:8081'); several are comma-separated. 'schema-registry.url' is its older name."},
		{Key: "subject", Type: connector.String,
			Description: "Writers: the subject the table's schema is registered under. The kafka and upsert-kafka connectors default it to '<topic>-value' (or '<topic>-key' for 'key.format'); other connectors' sinks must set it."},
		{Key: "basic-auth.credentials-source", Type: connector.Enum, Values: []string{"USER_INFO", "URL"},
			Description: "Where the registry's basic-auth credentials come from: 'USER_INFO' from 'basic-auth.user-info', 'URL' from the user information of 'url'. Without it, 'basic-auth.user-info' is used when set."},
		{Key: "basic-auth.user-info", Type: connector.String, Secret: true,
			Description: "The registry's basic-auth credentials, 'user:password'."},
		{Key: "bearer-auth.credentials-source", Type: connector.Enum, Values: []string{"STATIC_TOKEN"},
			Description: "Where the registry's bearer token comes from: 'STATIC_TOKEN' from 'bearer-auth.token' (the only source eddy knows)."},
		{Key: "bearer-auth.token", Type: connector.String, Secret: true,
			Description: "The bearer token sent to the registry."},
	},
}

type avroConfluentFormat struct{}

func (avroConfluentFormat) Spec() connector.Spec { return avroConfluentSpec }

// confluentRegistry is the configuration of the registry client.
type confluentRegistry struct {
	urls   []string
	user   string
	pass   string
	token  string
	shown  string // the URLs as errors show them (passwords hidden)
	client func() (*sr.Client, error)
}

// registryOf reads the registry options.
func registryOf(o connector.Options) (*confluentRegistry, error) {
	r := &confluentRegistry{}
	for _, u := range strings.Split(o.String("url"), ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.url' holds %q, which is not an http:// or https:// URL", redactUserinfo(u))
		}
		if pu.User != nil && o.String("basic-auth.credentials-source") == "URL" && r.user == "" {
			r.user = pu.User.Username()
			r.pass, _ = pu.User.Password()
		}
		pu.User = nil
		r.urls = append(r.urls, pu.String())
	}
	if len(r.urls) == 0 {
		return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.url' is required (for Kafka's key or value format: 'key.avro-confluent.url' or 'value.avro-confluent.url'): set the schema registry's URL ('http://registry:8081')")
	}
	r.shown = strings.Join(r.urls, ",")
	if info := o.String("basic-auth.user-info"); info != "" && o.String("basic-auth.credentials-source") != "URL" {
		u, p, ok := strings.Cut(info, ":")
		if !ok {
			return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.basic-auth.user-info' is not 'user:password'")
		}
		r.user, r.pass = u, p
	}
	if o.String("basic-auth.credentials-source") == "URL" && r.user == "" {
		return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.basic-auth.credentials-source' is URL but 'avro-confluent.url' holds no user and password; write it as 'http://user:password@registry:8081'")
	}
	if o.String("basic-auth.credentials-source") == "USER_INFO" && r.user == "" {
		return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.basic-auth.credentials-source' is USER_INFO but 'avro-confluent.basic-auth.user-info' is not set")
	}
	r.token = o.String("bearer-auth.token")
	if o.IsSet("bearer-auth.credentials-source") && r.token == "" {
		return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.bearer-auth.credentials-source' is set but 'avro-confluent.bearer-auth.token' is not")
	}
	if r.token != "" && r.user != "" {
		return nil, fmt.Errorf("avro-confluent: set basic-auth or bearer-auth credentials for the registry, not both")
	}
	r.client = sync.OnceValues(func() (*sr.Client, error) {
		opts := []sr.ClientOpt{sr.URLs(r.urls...), sr.HTTPClient(&http.Client{Timeout: time.Minute}), sr.UserAgent("eddy")}
		if r.user != "" {
			opts = append(opts, sr.BasicAuth(r.user, r.pass))
		}
		if r.token != "" {
			opts = append(opts, sr.BearerToken(r.token))
		}
		return sr.NewClient(opts...)
	})
	return r, nil
}

// redactUserinfo hides a URL's password in an error.
func redactUserinfo(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.User != nil {
		pu.User = url.User(pu.User.Username())
		return pu.String()
	}
	return u
}

// registryTimeout bounds one request to the registry.
const registryTimeout = time.Minute

// confluentSchemas caches the writers' schemas by registry and id: a
// schema id names one schema forever.
var confluentSchemas sync.Map // "<urls> <id>" -> string

// schemaByID returns the text of schema id.
func (r *confluentRegistry) schemaByID(id int) (string, error) {
	key := fmt.Sprintf("%s %d", r.shown, id)
	if s, ok := confluentSchemas.Load(key); ok {
		return s.(string), nil
	}
	cl, err := r.client()
	if err != nil {
		return "", fmt.Errorf("avro-confluent: the schema registry client for 'avro-confluent.url' %s: %w", r.shown, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	s, err := cl.SchemaByID(ctx, id)
	if err != nil {
		var re *sr.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusNotFound {
			return "", fmt.Errorf("avro-confluent: the message's schema id %d is unknown to the schema registry at 'avro-confluent.url' %s (the message was written against another registry, or is not in Confluent's wire format): %w", id, r.shown, err)
		}
		return "", fmt.Errorf("avro-confluent: fetching schema id %d from the schema registry at 'avro-confluent.url' %s: %w", id, r.shown, err)
	}
	if s.Type != sr.TypeAvro {
		return "", fmt.Errorf("avro-confluent: schema id %d in the registry at %s is a %v schema, not Avro", id, r.shown, s.Type)
	}
	if len(s.References) > 0 {
		return "", fmt.Errorf("avro-confluent: schema id %d in the registry at %s references other schemas, which eddy does not resolve; register the schema with its types inline", id, r.shown)
	}
	confluentSchemas.Store(key, s.Schema)
	return s.Schema, nil
}

// confluentIDs caches the ids of registered schemas by registry, subject
// and schema, so that the subtasks of a sink register once.
var confluentIDs sync.Map // "<urls> <subject> <schema>" -> int

// register registers schema under subject and returns its id.
func (r *confluentRegistry) register(subject, schema string) (int, error) {
	key := r.shown + " " + subject + " " + schema
	if id, ok := confluentIDs.Load(key); ok {
		return id.(int), nil
	}
	cl, err := r.client()
	if err != nil {
		return 0, fmt.Errorf("avro-confluent: the schema registry client for 'avro-confluent.url' %s: %w", r.shown, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), registryTimeout)
	defer cancel()
	ss, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: schema, Type: sr.TypeAvro})
	if err != nil {
		return 0, fmt.Errorf("avro-confluent: registering the table's schema under subject %q ('avro-confluent.subject') at the schema registry %s ('avro-confluent.url'): %w", subject, r.shown, err)
	}
	confluentIDs.Store(key, ss.ID)
	return ss.ID, nil
}

func (avroConfluentFormat) NewDecoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, avroNeedsTable("avro-confluent")
	}
	reg, err := registryOf(ctx.Options)
	if err != nil {
		return nil, err
	}
	a, err := newAvroRows("avro-confluent", ctx.Table.Schema)
	if err != nil {
		return nil, err
	}
	resolved := map[uint32]*avro.Schema{}
	return decoderFunc[connector.TableRecord](func(data []byte, emit func(connector.TableRecord)) error {
		if len(data) < 5 || data[0] != 0 {
			return fmt.Errorf("avro-confluent: the message is not in Confluent's wire format (a 0 byte, a 4-byte schema id, the Avro record): it has %d bytes%s", len(data), firstByte(data))
		}
		id := binary.BigEndian.Uint32(data[1:5])
		s := resolved[id]
		if s == nil {
			text, err := reg.schemaByID(int(id))
			if err != nil {
				return err
			}
			w, err := parseAvroSchema(text)
			if err != nil {
				return fmt.Errorf("avro-confluent: schema id %d from the registry at %s does not parse: %w", id, reg.shown, err)
			}
			rtext, err := avroReaderFor(a.rt, text)
			if err != nil {
				return fmt.Errorf("avro-confluent: schema id %d: %w", id, err)
			}
			reader, err := parseAvroSchema(rtext)
			if err != nil {
				return fmt.Errorf("avro-confluent: the table's schema as a reader of schema id %d does not parse: %w", id, err)
			}
			if s, err = avro.Resolve(w, reader); err != nil {
				return fmt.Errorf("avro-confluent: the writer's schema id %d cannot be read as the table's columns (a column missing from it must be nullable; types must match or widen as Avro's schema resolution allows): %w", id, err)
			}
			resolved[id] = s
		}
		r, err := a.decode(s, data[5:])
		if err != nil {
			return fmt.Errorf("%w (schema id %d)", err, id)
		}
		emit(connector.TableRecord{Kind: changelog.Insert, Row: r})
		return nil
	}), nil
}

// firstByte describes the first byte of a message that is not in the wire
// format.
func firstByte(data []byte) string {
	if len(data) == 0 || data[0] == 0 {
		return ""
	}
	return fmt.Sprintf(" and starts with 0x%02x, not the magic byte 0", data[0])
}

func (avroConfluentFormat) NewEncoder(ctx connector.Context) (any, error) {
	if ctx.Table == nil {
		return nil, avroNeedsTable("avro-confluent")
	}
	reg, err := registryOf(ctx.Options)
	if err != nil {
		return nil, err
	}
	subject := ctx.Options.String("subject")
	if subject == "" {
		return nil, fmt.Errorf("avro-confluent: option 'avro-confluent.subject' is required to write: set the subject the table's schema is registered under (the kafka connectors default it to '<topic>-value')")
	}
	a, err := newAvroRows("avro-confluent", ctx.Table.Schema)
	if err != nil {
		return nil, err
	}
	id := -1
	return connector.EncoderFunc[connector.TableRecord](func(dst []byte, c connector.TableRecord) ([]byte, error) {
		if id < 0 {
			n, err := reg.register(subject, a.text)
			if err != nil {
				return dst, err
			}
			id = n
		}
		start := len(dst)
		dst = append(dst, 0)
		dst = binary.BigEndian.AppendUint32(dst, uint32(id))
		out, err := a.encode(dst, c)
		if err != nil {
			return dst[:start], err
		}
		return out, nil
	}), nil
}

func init() { connector.Register(avroConfluentFormat{}) }

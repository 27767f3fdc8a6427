package connector

import (
	"regexp"
	"strings"
)

// Redact returns a copy of the options of a table (with its 'connector'
// key, and its format's options under the format's name and a dot) in which
// the values of secret options are replaced by "******", for statements
// shown back to users (SHOW CREATE TABLE), logs and plans. An option the
// connector or format does not declare is hidden too if its key names a
// password, secret, token or credential, since it cannot be known to be
// harmless.
func (r *Registry) Redact(options map[string]string) map[string]string {
	var spec *Spec
	if f, err := r.Connector(options["connector"]); err == nil {
		s := f.Spec()
		spec = &s
	}
	formats := map[string]*Spec{}
	for _, key := range []string{FormatKey, "key.format", "value.format"} {
		if name := options[key]; name != "" {
			if f, err := r.Format(name); err == nil {
				s := f.Spec()
				formats[name] = &s
			}
		}
	}
	out := make(map[string]string, len(options))
	for k, v := range options {
		if v != "" && r.secret(spec, formats, k) {
			v = "******"
		} else {
			v = redactURL(v)
		}
		out[k] = v
	}
	return out
}

// secret reports whether option key of a connector of spec, with formats,
// is secret or may be.
func (r *Registry) secret(spec *Spec, formats map[string]*Spec, key string) bool {
	if spec != nil {
		if o, ok := spec.option(key); ok {
			return o.Secret
		}
	}
	for name, fs := range formats {
		for _, prefix := range []string{name + ".", "key." + name + ".", "value." + name + "."} {
			if rest, ok := strings.CutPrefix(key, prefix); ok {
				if o, ok := fs.option(rest); ok {
					return o.Secret
				}
			}
		}
	}
	k := strings.ToLower(key)
	for _, word := range []string{"password", "secret", "token", "credential", "sasl.jaas"} {
		if strings.Contains(k, word) {
			return true
		}
	}
	return false
}

// urlPassword matches the password of the user information of a URL
// ("scheme://user:password@"), in every URL of a value (a list of servers).
var urlPassword = regexp.MustCompile(`(://[^:/?#@\s,]*:)[^@\s]*@`)

// redactURL hides the passwords of URLs' user information
// ("amqp://user:pass@host" shows as "amqp://user:******@host"); other values
// are returned as they are.
func redactURL(v string) string {
	if !strings.Contains(v, "@") {
		return v
	}
	return urlPassword.ReplaceAllString(v, "${1}******@")
}

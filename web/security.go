package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
)

// maxBody bounds the body of a request (a POST's JSON).
const maxBody = 4 << 10

// tokenCookie is the cookie that carries the token of a browser that opened
// the dashboard as /?token=<token>.
const tokenCookie = "eddy_token"

// NewToken returns a random token: 32 bytes from crypto/rand, in hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("web: generating a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// tokenEqual compares a presented token with the server's in constant time
// (hashing both first, so that not even the length leaks).
func tokenEqual(got, want string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1 && got != ""
}

// secure wraps the routes in the checks every request passes: the token
// (when one is needed), the Host of a loopback server, cross-site POSTs,
// the content type and size of bodies.
func (s *Server) secure(h http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, http.StatusForbidden, "cross-site request refused: actions are taken from the dashboard's own origin or from a client that is not a browser (curl, eddy savepoint)")
	}))
	inner := cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				s.writeError(w, http.StatusUnsupportedMediaType, "send the request's body as JSON with the header Content-Type: application/json")
				return
			}
		}
		if r.ContentLength > maxBody {
			s.writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request's body has %d bytes; the limit is %d", r.ContentLength, maxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		if s.cfg.token == "" {
			// A loopback server without a token: refuse other host names,
			// so that a web page cannot reach it through DNS rebinding.
			if !loopbackHost(r.Host) {
				s.writeError(w, http.StatusForbidden, fmt.Sprintf("the host %q is not this machine's loopback address: a server without a token answers localhost, 127.0.0.1 and [::1] only (serve it on another address with a token to reach it from elsewhere)", r.Host))
				return
			}
			inner.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/" && r.URL.Query().Has("token") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			// The dashboard opened with the token printed at start: keep
			// it in a cookie and drop it from the address bar.
			if !tokenEqual(r.URL.Query().Get("token"), s.cfg.token) {
				s.writeError(w, http.StatusUnauthorized, "wrong token: open the address printed when the job started (with its ?token=)")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.cfg.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if !s.authorized(r) {
			hd.Set("WWW-Authenticate", `Bearer realm="eddy"`)
			s.writeError(w, http.StatusUnauthorized, "this server needs its token: send the header 'Authorization: Bearer <token>' (eddy savepoint --token, or EDDY_REST_TOKEN), or open the dashboard at the address printed when the job started (/?token=...)")
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// authorized reports whether the request presents the server's token.
func (s *Server) authorized(r *http.Request) bool {
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, tok, ok := strings.Cut(a, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && tokenEqual(strings.TrimSpace(tok), s.cfg.token)
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return tokenEqual(c.Value, s.cfg.token)
	}
	return false
}

// loopbackHost reports whether the Host header names this machine's
// loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// decodeJSON reads the request's JSON body into v: an empty body leaves v
// as it is; unknown fields, trailing data and bodies over 4 KiB are
// refused (the error says so, for a 400 or 413).
func decodeJSON(r *http.Request, v any) (int, error) {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil, errors.Is(err, io.EOF):
		return 0, nil
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("the request's body is over the limit of %d bytes", maxBody)
	default:
		return http.StatusBadRequest, err
	}
}

// writeJSON answers v as JSON with the status code.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		s.cfg.log.Debug("web: writing a response", "error", err)
	}
}

// writeError answers {"error": msg} with the status code.
func (s *Server) writeError(w http.ResponseWriter, code int, msg string) {
	s.writeJSON(w, code, map[string]string{"error": msg})
}

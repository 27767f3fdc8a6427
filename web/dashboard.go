package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// The dashboard's page, scripts and styles: plain files, served as they
// are (no build step, nothing loaded from elsewhere).
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardCSP lets the page load its own scripts, styles and data only: no
// inline scripts, no other origin, no framing.
const dashboardCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// dashboardTypes are the content types of the dashboard's files, by
// extension (not left to the system's MIME tables).
var dashboardTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// dashboardFile is one embedded file with its content type and ETag.
type dashboardFile struct {
	name  string
	data  []byte
	ctype string
	etag  string
}

// dashboardHandler serves the dashboard: the page at / and its files under
// /assets/ (no directory listings; any other path is not found). Responses
// must be revalidated (Cache-Control: no-cache, with an ETag), so a new
// binary's page is seen at once.
func dashboardHandler() http.Handler {
	files, err := loadDashboard()
	if err != nil {
		// The files are embedded at build time: a failure here is a bug.
		panic(fmt.Sprintf("web: reading the embedded dashboard: %v", err))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", dashboardCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the dashboard is read with GET", http.StatusMethodNotAllowed)
			return
		}
		var f *dashboardFile
		switch p := r.URL.Path; {
		case p == "/":
			f = files["index.html"]
		case strings.HasPrefix(p, "/assets/"):
			if name := strings.TrimPrefix(p, "/assets/"); name != "index.html" {
				f = files[name]
			}
		}
		if f == nil {
			http.Error(w, "not found: the dashboard is at / and its files under /assets/", http.StatusNotFound)
			return
		}
		h.Set("Content-Type", f.ctype)
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.data))
	})
}

// loadDashboard reads the embedded files, by their path under dashboard/.
func loadDashboard() (map[string]*dashboardFile, error) {
	sub, err := fs.Sub(dashboardFiles, "dashboard")
	if err != nil {
		return nil, err
	}
	files := map[string]*dashboardFile{}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ctype, ok := dashboardTypes[path.Ext(name)]
		if !ok {
			return nil // not served
		}
		data, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		files[name] = &dashboardFile{name: name, data: data, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if files["index.html"] == nil {
		return nil, fmt.Errorf("no index.html under web/dashboard")
	}
	return files, nil
}

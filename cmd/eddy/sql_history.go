package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// historyMax is how many statements the history file keeps.
const historyMax = 1000

// sqlHistory is the SQL client's history: the statements run, numbered
// from 1, and the file they are kept in across sessions (one statement a
// line, its line breaks written \\n and its backslashes \\\\). HISTORY
// lists them and !n (or !! for the last) runs statement n again; the
// client has no line editor, so arrow keys do not recall them.
type sqlHistory struct {
	path    string // "" keeps the history in memory only
	entries []string
	// warned is set once a failure to write the file has been reported.
	warned bool
}

// defaultHistoryPath is ~/.eddy_sql_history, or "" without a home.
func defaultHistoryPath() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".eddy_sql_history")
}

// loadHistory reads the history file at path (a missing file is an empty
// history) and trims it to historyMax statements.
func loadHistory(path string) (*sqlHistory, error) {
	h := &sqlHistory{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("history file %s: %w; use --history-file to choose another", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			h.entries = append(h.entries, unescapeHistory(line))
		}
	}
	if err := sc.Err(); err != nil {
		return h, fmt.Errorf("history file %s: %w", path, err)
	}
	if len(h.entries) > historyMax {
		h.entries = h.entries[len(h.entries)-historyMax:]
		if err := h.rewrite(); err != nil {
			return h, err
		}
	}
	return h, nil
}

func escapeHistory(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`).Replace(s)
}

func unescapeHistory(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// rewrite writes the whole history to its file.
func (h *sqlHistory) rewrite() error {
	var b strings.Builder
	for _, e := range h.entries {
		b.WriteString(escapeHistory(e))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(h.path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("history file %s: %w", h.path, err)
	}
	return nil
}

// add appends a statement to the history and its file. A failure to write
// the file is returned once; the history goes on in memory.
func (h *sqlHistory) add(stmt string) error {
	if n := len(h.entries); n > 0 && h.entries[n-1] == stmt {
		return nil
	}
	h.entries = append(h.entries, stmt)
	if h.path == "" || h.warned {
		return nil
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		_, err = f.WriteString(escapeHistory(stmt) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		h.warned = true
		return fmt.Errorf("history file %s: %w; the history is kept for this session only", h.path, err)
	}
	return nil
}

// get returns statement n (from 1); n = 0 is the last one.
func (h *sqlHistory) get(n int) (string, bool) {
	if n == 0 {
		n = len(h.entries)
	}
	if n < 1 || n > len(h.entries) {
		return "", false
	}
	return h.entries[n-1], true
}

// list writes the history, numbered, statements of several lines
// indented under their number.
func (h *sqlHistory) list(w io.Writer) {
	for i, e := range h.entries {
		fmt.Fprintf(w, "%5d  %s;\n", i+1, strings.ReplaceAll(e, "\n", "\n       "))
	}
}

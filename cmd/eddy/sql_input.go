package main

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// errInterrupted is what reading input returns when Ctrl-C is pressed.
var errInterrupted = errors.New("interrupted")

// sqlInput reads the SQL client's input: lines at the prompt and single
// keys in the result views. One goroutine reads the input and hands over
// what it reads, so that a view waiting for a key and the prompt waiting
// for a line never race for the same bytes, and a key press can be waited
// for together with the end of a query.
type sqlInput struct {
	chunks  chan []byte
	err     error // why chunks was closed
	pending []byte
	// intr receives the client's interrupts (Ctrl-C); quit is closed
	// when the client is told to end.
	intr <-chan os.Signal
	quit <-chan struct{}
}

func newSQLInput(r io.Reader, intr <-chan os.Signal, quit <-chan struct{}) *sqlInput {
	in := &sqlInput{chunks: make(chan []byte), intr: intr, quit: quit}
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := r.Read(buf)
			if n > 0 {
				in.chunks <- buf[:n]
			}
			if err != nil {
				in.err = err
				close(in.chunks)
				return
			}
		}
	}()
	return in
}

// readLine returns the next line without its line break. At the end of
// the input it returns the last, unterminated line if any, then io.EOF;
// on Ctrl-C it drops what was typed and returns errInterrupted, and when
// the client is told to end, errQuit.
func (in *sqlInput) readLine() (string, error) {
	for {
		if i := bytes.IndexByte(in.pending, '\n'); i >= 0 {
			line := string(bytes.TrimSuffix(in.pending[:i], []byte("\r")))
			in.pending = in.pending[i+1:]
			return line, nil
		}
		select {
		case chunk, ok := <-in.chunks:
			if !ok {
				if len(in.pending) > 0 {
					line := string(in.pending)
					in.pending = nil
					return line, nil
				}
				if in.err == io.EOF {
					return "", io.EOF
				}
				return "", in.err
			}
			in.pending = append(in.pending, chunk...)
		case <-in.intr:
			in.pending = nil
			return "", errInterrupted
		case <-in.quit:
			return "", errQuit
		}
	}
}

// keys returns a channel of the keys typed, for a view that ends at a key
// press, and the function that ends it (after which the prompt reads
// again): what is typed after the key that ended the view stays for the
// prompt.
func (in *sqlInput) keys() (keys <-chan byte, stop func()) {
	out := make(chan byte)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for {
			for len(in.pending) > 0 {
				select {
				case out <- in.pending[0]:
					in.pending = in.pending[1:]
				case <-done:
					return
				}
			}
			select {
			case chunk, ok := <-in.chunks:
				if !ok {
					return
				}
				in.pending = append(in.pending, chunk...)
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		close(done)
		for range out {
		}
	}
}

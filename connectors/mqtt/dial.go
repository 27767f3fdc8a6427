package mqtt

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// tlsFor returns the TLS configuration of connections to u.
func (c *config) tlsFor(u *url.URL) *tls.Config {
	var cfg *tls.Config
	if c.tls != nil {
		cfg = c.tls.Clone()
	} else {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	return cfg
}

// dialNet opens the network connection of a link to u: TCP, TLS, or a
// WebSocket carrying MQTT in binary frames.
func (c *config) dialNet(ctx context.Context, u *url.URL) (net.Conn, error) {
	switch u.Scheme {
	case "ssl", "tls", "mqtts":
		d := tls.Dialer{Config: c.tlsFor(u)}
		conn, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			return nil, err
		}
		return buffered(conn), nil
	case "ws", "wss":
		d := websocket.Dialer{Subprotocols: []string{"mqtt"}, HandshakeTimeout: c.connTimeout, Proxy: websocket.DefaultDialer.Proxy}
		if u.Scheme == "wss" {
			d.TLSClientConfig = c.tlsFor(u)
		}
		ws, resp, err := d.DialContext(ctx, u.String(), nil)
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err != nil {
			return nil, fmt.Errorf("opening a WebSocket: %w", err)
		}
		return &wsConn{ws: ws}, nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return buffered(conn), nil
}

// bufferedConn reads a connection through a buffer: paho reads each packet
// in several small reads (its type, each byte of its length, its body),
// which would each be a system call. Only paho's one reading goroutine
// reads. It is a sync.Locker, which paho.golang locks around the writes of
// each packet: a wrapped TCP connection no longer writes a packet's parts
// in one system call, and the acknowledgements the reader sends, the
// pings and subscriptions would otherwise interleave within packets.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
	sync.Mutex
}

func buffered(c net.Conn) net.Conn { return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, 32<<10)} }

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// wsConn is a WebSocket as a net.Conn: what is written goes out in binary
// frames, and reads run through the frames' data as one stream, as MQTT
// over WebSockets has it.
type wsConn struct {
	ws     *websocket.Conn
	packet sync.Mutex // held by paho around the writes of one packet
	write  sync.Mutex // one writer at a time, as the WebSocket needs
	read   sync.Mutex
	frame  io.Reader
}

// Lock and Unlock make paho write each packet as a whole.
func (c *wsConn) Lock()   { c.packet.Lock() }
func (c *wsConn) Unlock() { c.packet.Unlock() }

func (c *wsConn) Read(p []byte) (int, error) {
	c.read.Lock()
	defer c.read.Unlock()
	for {
		if c.frame == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				continue
			}
			c.frame = r
		}
		n, err := c.frame.Read(p)
		if err == io.EOF {
			c.frame = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	c.write.Lock()
	defer c.write.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsConn) Close() error                       { return c.ws.Close() }
func (c *wsConn) LocalAddr() net.Addr                { return c.ws.LocalAddr() }
func (c *wsConn) RemoteAddr() net.Addr               { return c.ws.RemoteAddr() }
func (c *wsConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *wsConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }
func (c *wsConn) SetDeadline(t time.Time) error {
	if err := c.ws.SetReadDeadline(t); err != nil {
		return err
	}
	return c.ws.SetWriteDeadline(t)
}

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
		return newPacketConn(conn, bufio.NewReaderSize(conn, readBuffer), conn.Write), nil
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
		w := &wsConn{ws: ws}
		return newPacketConn(w, w, w.Write), nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return newPacketConn(conn, bufio.NewReaderSize(conn, readBuffer), conn.Write), nil
}

// readBuffer is the size of a connection's read buffer.
const readBuffer = 32 << 10

// packetConn is a link's network connection. It reads through r: paho
// reads each packet in several small reads (its type, each byte of its
// length, its body), which on a bare connection are each a system call.
// And it is a sync.Locker, which paho.golang locks around the writes of each
// packet (its type and length, its header, its payload): the writes made
// under the lock are gathered and sent in one write when it is released,
// one system call (or one WebSocket frame) per packet, and no packet of
// another goroutine (the acknowledgements a reader sends, paho's pings)
// can come between them. While a batch is held (hold and release), packets
// wait and go out together at its end: a checkpoint's acknowledgements in
// one write. paho.mqtt.golang writes from one goroutine without locking:
// its writes go straight through.
type packetConn struct {
	net.Conn
	r    io.Reader
	send func([]byte) (int, error)

	mu       sync.Mutex // held by paho.golang around each packet
	inPacket bool       // written and read by the holder of mu

	wmu  sync.Mutex // guards out and held
	out  []byte
	held int
}

func newPacketConn(c net.Conn, r io.Reader, send func([]byte) (int, error)) *packetConn {
	return &packetConn{Conn: c, r: r, send: send}
}

func (c *packetConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Lock begins a packet.
func (c *packetConn) Lock() {
	c.mu.Lock()
	c.inPacket = true
}

// Unlock ends a packet, sending it unless a batch is held.
func (c *packetConn) Unlock() {
	c.inPacket = false
	c.wmu.Lock()
	if c.held == 0 {
		c.flush()
	}
	c.wmu.Unlock()
	c.mu.Unlock()
}

func (c *packetConn) Write(p []byte) (int, error) {
	if !c.inPacket {
		return c.send(p)
	}
	c.wmu.Lock()
	c.out = append(c.out, p...)
	c.wmu.Unlock()
	return len(p), nil
}

// flush sends what was gathered; wmu is held. A failed write closes the
// connection: paho, reading from it, reports the loss.
func (c *packetConn) flush() {
	if len(c.out) == 0 {
		return
	}
	if _, err := c.send(c.out); err != nil {
		_ = c.Conn.Close()
	}
	if cap(c.out) > 1<<20 {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
}

// hold begins a batch: packets wait for its release.
func (c *packetConn) hold() {
	c.wmu.Lock()
	c.held++
	c.wmu.Unlock()
}

// release ends a batch and sends its packets.
func (c *packetConn) release() {
	c.wmu.Lock()
	if c.held--; c.held == 0 {
		c.flush()
	}
	c.wmu.Unlock()
}

// wsConn is a WebSocket as a net.Conn: what is written goes out as one
// binary frame, and reads run through the frames' data as one stream, as
// MQTT over WebSockets has it.
type wsConn struct {
	ws    *websocket.Conn
	write sync.Mutex // one writer at a time, as the WebSocket needs
	frame io.Reader
}

func (c *wsConn) Read(p []byte) (int, error) {
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

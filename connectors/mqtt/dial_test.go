package mqtt

import (
	"context"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// TestConnectionsLockPackets checks that the TCP connections of links are
// sync.Lockers: paho.golang writes a packet in several writes unless the
// connection is a bare TCP connection, and locks Lockers around them;
// without, the acknowledgements a reader sends interleave with paho's own
// packets, which the broker drops as malformed.
func TestConnectionsLockPackets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := &config{connTimeout: 5 * time.Second}
	for _, scheme := range []string{"tcp", "mqtt"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := cfg.dialNet(ctx, &url.URL{Scheme: scheme, Host: ln.Addr().String()})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.(sync.Locker); !ok {
			t.Errorf("a %s:// connection is a %T, which paho cannot lock around a packet's writes", scheme, c)
		}
		if _, ok := c.(*packetConn); !ok {
			t.Errorf("a %s:// connection is a %T, which does not send a packet in one write", scheme, c)
		}
		c.Close()
	}
}

// TestPacketConnSendsPacketsWhole checks that the writes of a packet (made
// under the lock) go out in one write, that a held batch sends its
// packets together at its release, and that writes made without the lock
// (paho.mqtt.golang's) go straight through.
func TestPacketConnSendsPacketsWhole(t *testing.T) {
	var sent []string
	c := newPacketConn(nil, nil, func(b []byte) (int, error) {
		sent = append(sent, string(b))
		return len(b), nil
	})
	packet := func(parts ...string) {
		c.Lock()
		for _, p := range parts {
			if _, err := c.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		c.Unlock()
	}
	packet("a", "b", "c")
	if len(sent) != 1 || sent[0] != "abc" {
		t.Fatalf("a packet written in three parts went out as %q, want one write", sent)
	}
	c.hold()
	packet("d", "e")
	packet("f")
	if len(sent) != 1 {
		t.Fatalf("packets went out while a batch was held: %q", sent)
	}
	c.release()
	if len(sent) != 2 || sent[1] != "def" {
		t.Fatalf("a batch of two packets went out as %q, want one write of both", sent[1:])
	}
	if _, err := c.Write([]byte("g")); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 || sent[2] != "g" {
		t.Fatalf("a write without the lock went out as %q, want it at once", sent[2:])
	}
}

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
		c.Close()
	}
}

package mqtt_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/eddystream/eddy"
	"github.com/eddystream/eddy/connector/connectortest"
)

// tlsFront terminates TLS in front of the broker with a certificate of its
// own, and returns its URL and the file of that certificate, to trust.
func tlsFront(t testing.TB) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "eddy test broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go forward(c)
		}
	}()
	return "ssl://" + ln.Addr().String(), ca
}

// forward joins c to a connection to the broker.
func forward(c net.Conn) {
	b, err := net.Dial("tcp", brokerAddr)
	if err != nil {
		c.Close()
		return
	}
	go func() { _, _ = io.Copy(b, c); b.Close() }()
	_, _ = io.Copy(c, b)
	c.Close()
}

// wsFront carries MQTT over WebSockets to the broker's TCP listener, and
// returns its URL.
func wsFront(t testing.TB) string {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{"mqtt"}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", brokerAddr)
		if err != nil {
			ws.Close()
			return
		}
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := b.Read(buf)
				if n > 0 && ws.WriteMessage(websocket.BinaryMessage, buf[:n]) != nil {
					break
				}
				if err != nil {
					break
				}
			}
			ws.Close()
		}()
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				break
			}
			if _, err := b.Write(data); err != nil {
				break
			}
		}
		b.Close()
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "ws://" + ln.Addr().String() + "/mqtt"
}

// TestTransports reads and writes through TLS (trusting 'tls.ca-file') and
// WebSockets, in both versions.
func TestTransports(t *testing.T) {
	needBroker(t)
	sslURL, ca := tlsFront(t)
	wsURL := wsFront(t)
	for _, tr := range []struct {
		name string
		opts map[string]string
	}{{"ssl", map[string]string{"url": sslURL, "tls.ca-file": ca}}, {"ws", map[string]string{"url": wsURL}}} {
		for _, version := range versions {
			t.Run(tr.name+"/"+version, func(t *testing.T) {
				p, client := unique(t), unique(t)
				presubscribe(t, client, "", 0, p+"/in")
				out := dialRaw(t, unique(t)+"-sub", true, 0)
				defer out.close()
				out.subscribe(1, p+"/out")
				pub := dialRaw(t, unique(t)+"-pub", true, 0)
				defer pub.close()
				pub.publishLines(func(int) string { return p + "/in" }, 0, 300, 1)
				opts := func(extra map[string]string) map[string]string {
					m := map[string]string{"format": "json", "mqtt.version": version}
					for k, v := range tr.opts {
						m[k] = v
					}
					for k, v := range extra {
						m[k] = v
					}
					return m
				}
				src := openSource(t, opts(map[string]string{"topic": p + "/in", "client-id": client}))
				sink := openSink(t, opts(map[string]string{"topic": p + "/out"}))
				mem := connectortest.NewMemorySink[line]()
				env := checkpointed(t, 1, eddy.WithRestartStrategy(eddy.NoRestart()))
				s := eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]())
				eddy.WriteTo(s, "memory", mem.Sink())
				eddy.WriteTo(s, "mqtt out", sink)
				j := startJob(t, env)
				committedUntil(t, j, mem, time.Minute, "300 messages", func(got []line) bool { return distinct(got) == 300 })
				out.waitUntil(time.Minute, "300 copies", func(ms []rawMsg) bool { return len(ms) >= 300 })
				if err := j.stop(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestUntrustedCertificate connects to a TLS broker whose certificate is
// not trusted: the job fails, saying so, once 'connection.timeout' passes.
func TestUntrustedCertificate(t *testing.T) {
	needBroker(t)
	sslURL, _ := tlsFront(t)
	src := openSource(t, map[string]string{"url": sslURL, "topic": unique(t) + "/in", "format": "json", "connection.timeout": "1 s"})
	env := checkpointed(t, 1, eddy.WithRestartStrategy(eddy.NoRestart()))
	eddy.WriteTo(eddy.FromSource(env, "mqtt in", src, eddy.NoWatermarks[line]()), "memory", connectortest.NewMemorySink[line]().Sink())
	j := startJob(t, env)
	select {
	case err := <-j.done:
		close(j.done)
		if err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "'connection.timeout'") {
			t.Fatalf("the job ended with %v, want an error about the certificate, after 'connection.timeout'", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the job goes on without a trusted connection")
	}
}

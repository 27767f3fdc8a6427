package testservers

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SeaweedFS is a running private SeaweedFS server ("weed mini"): an
// S3-compatible object store and, beside it, an Iceberg REST catalog whose
// catalogs are its table buckets. The object store signs requests with
// AccessKey and SecretKey.
type SeaweedFS struct {
	// S3Endpoint is the object store's URL, http://127.0.0.1:port.
	S3Endpoint string
	// CatalogURI is the Iceberg REST catalog's URL, http://127.0.0.1:port.
	CatalogURI string
	// AccessKey and SecretKey are the credentials of the store's one user.
	AccessKey, SecretKey string
	bin                  string
	master               string // host:port.grpcPort, as weed shell takes it
	dir                  string
}

// weedBin finds SeaweedFS's weed binary: $EDDY_WEED_BIN, else weed on the
// PATH.
func weedBin() string {
	if b := os.Getenv("EDDY_WEED_BIN"); b != "" {
		return b
	}
	b, _ := exec.LookPath("weed")
	return b
}

// StartSeaweedFS starts a private SeaweedFS server for t (master, volume,
// filer, S3 and Iceberg REST catalog in one process) and stops it when t
// ends. Without the weed binary the test is skipped, or fails when CI=true;
// .ci/run builds it.
func StartSeaweedFS(t testing.TB) *SeaweedFS {
	t.Helper()
	bin := weedBin()
	if bin == "" {
		msg := "SeaweedFS's weed binary is not installed (build it as .ci/run does, or set EDDY_WEED_BIN)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "eddy-seaweedfs-")
	if err != nil {
		t.Fatal(err)
	}
	s := &SeaweedFS{AccessKey: "eddy-access", SecretKey: "eddy-secret-key-1", bin: bin, dir: dir}
	iam := fmt.Sprintf(`{"identities":[{"name":"admin","credentials":[{"accessKey":%q,"secretKey":%q}],`+
		`"actions":["Admin","Read","List","Tagging","Write"]},{"name":"anonymous"}]}`, s.AccessKey, s.SecretKey)
	t.Cleanup(func() { os.RemoveAll(dir) })
	iamPath := filepath.Join(dir, "iam.json")
	if err := os.WriteFile(iamPath, []byte(iam), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		log, taken := s.start(t, iamPath)
		if log == "" {
			return s
		}
		if !taken || attempt == 4 {
			t.Fatalf("weed mini did not start:\n%s", log)
		}
	}
}

// start starts weed mini on ports that were free a moment ago and waits
// until its S3 and catalog endpoints answer. Another process can take a
// port in that moment (a test server of another package, run at the same
// time): weed then exits, and start returns its log and taken = true so
// that the caller tries other ports. It returns "" once the server is up.
func (s *SeaweedFS) start(t testing.TB, iamPath string) (log string, taken bool) {
	t.Helper()
	dir, bin := s.dir, s.bin
	ports := freePorts(t, 12)
	port := func(i int) string { return strconv.Itoa(ports[i]) }
	s.master = fmt.Sprintf("127.0.0.1:%d.%d", ports[0], ports[1])
	s.S3Endpoint = "http://127.0.0.1:" + port(6)
	s.CatalogURI = "http://127.0.0.1:" + port(8)
	data := filepath.Join(dir, "data")
	os.RemoveAll(data)
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mini",
		"-master.port", port(0), "-master.port.grpc", port(1),
		"-volume.port", port(2), "-volume.port.grpc", port(3),
		"-filer.port", port(4), "-filer.port.grpc", port(5),
		"-s3.port", port(6), "-s3.port.grpc", port(7),
		"-s3.port.iceberg", port(8), "-webdav.port", port(9),
		"-admin.port", port(10), "-admin.port.grpc", port(11), "-admin.port.legacy=0",
		"-s3.port.lance=0", "-s3.config", iamPath,
		"-ip", "127.0.0.1", "-ip.bind", "127.0.0.1", "-dir", data)
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(dir, "weed.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s.AccessKey, "AWS_SECRET_ACCESS_KEY="+s.SecretKey)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s mini: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			<-exited
			logf.Close()
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for _, url := range []string{s.CatalogURI + "/v1/config", s.S3Endpoint + "/"} {
		for {
			select {
			case err := <-exited:
				stopped = true
				logf.Close()
				log, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
				return fmt.Sprintf("exited: %v\n%s", err, tail(log, 4000)), bytes.Contains(log, []byte("address already in use")) || bytes.Contains(log, []byte("Port allocation failed"))
			default:
			}
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) {
				stop()
				log, _ := os.ReadFile(filepath.Join(dir, "weed.log"))
				return fmt.Sprintf("did not answer at %s: %v\n%s", url, err, tail(log, 4000)), false
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	t.Cleanup(stop)
	return "", false
}

// CreateBucket creates the S3 bucket name.
func (s *SeaweedFS) CreateBucket(t testing.TB, name string) {
	t.Helper()
	s.shell(t, "s3.bucket.create -name "+name)
}

// CreateTableBucket creates the table bucket name, a catalog of the
// Iceberg REST server (its warehouse is s3://name).
func (s *SeaweedFS) CreateTableBucket(t testing.TB, name string) {
	t.Helper()
	s.shell(t, "s3tables.bucket -create -name "+name+" -account 000000000000")
}

// shell runs one command of weed shell against the server.
func (s *SeaweedFS) shell(t testing.TB, command string) {
	t.Helper()
	var out bytes.Buffer
	deadline := time.Now().Add(60 * time.Second)
	for {
		out.Reset()
		cmd := exec.Command(s.bin, "shell", "-master="+s.master)
		cmd.Stdin = strings.NewReader(command + "\nexit\n")
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if err == nil && !strings.Contains(strings.ToLower(out.String()), "error") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("weed shell %q: %v\n%s", command, err, out.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// freePorts returns n distinct free TCP ports of 127.0.0.1, held open until
// all are chosen; a variable, so that a test can hand out a port that is
// taken.
var freePorts = func(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// tail returns the last n bytes of b, as text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

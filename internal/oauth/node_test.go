package oauth_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boxmem/box/internal/keys"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// nodeRun runs a command through scripts/node.sh (Node 22+ and the packages of clients/package.json) and
// calls line for each line it prints, until it exits. Only BOX_SKIP_NODE=1 skips, loudly.
func nodeRun(t *testing.T, timeout time.Duration, line func(string), args ...string) (string, error) {
	t.Helper()
	if os.Getenv("BOX_SKIP_NODE") == "1" {
		t.Skip("SKIPPED: BOX_SKIP_NODE=1 — the TypeScript SDK and conformance OAuth clients did not run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(), "scripts", "node.sh"), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CI=true", "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		all.WriteString(sc.Text() + "\n")
		line(sc.Text())
	}
	err = cmd.Wait()
	if err != nil {
		t.Logf("stderr:\n%s", stderr.String())
	}
	return all.String(), err
}

// The TypeScript SDK's OAuth client, configured with http://127.0.0.1:PORT/mcp as many are: discovery from
// the 401 (whose scope it asks for), registration, the consent page at localhost (where the passkey works)
// approved in a real browser, the code trade, tools per the checkboxes, one refresh rotation. The redirect's
// iss is the issuer the client discovered, byte for byte, as the Python SDK ≥ 2 demands.
func TestTypeScriptSDKClientOAuth(t *testing.T) {
	f := newFx(t)
	owner := f.browserOwner(t)
	var result struct {
		Tools      []string
		Scope      string
		Refreshed  bool
		Iss        string
		Issuer     string
		OldRefresh string
	}
	out, err := nodeRun(t, 90*time.Second, func(l string) {
		if u, ok := strings.CutPrefix(l, "AUTHORIZE "); ok {
			owner.approve(u) // the SDK asks for the challenge's scope: Memory comes pre-ticked, building never
		}
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			json.Unmarshal([]byte(r), &result)
		}
	}, "node", filepath.Join(repoRoot(), "clients", "ts-oauth-client.cjs"), f.ip+"/mcp")
	if err != nil {
		t.Fatalf("ts-oauth-client: %v\n%s", err, out)
	}
	tools := strings.Join(result.Tools, " ")
	if !strings.Contains(tools, "memory_remember") || strings.Contains(tools, "email_read") || strings.Contains(tools, "propose_section") ||
		result.Scope != "memory.read memory.write" || !result.Refreshed {
		t.Fatalf("result: %+v\n%s", result, out)
	}
	if result.Issuer != f.ip || result.Iss != result.Issuer {
		t.Fatalf("the redirect's iss %q, the discovered issuer %q, the address the client was given %q", result.Iss, result.Issuer, f.ip)
	}
	// The rotated-away refresh token is now a reuse: the whole family ends.
	fl := &flow{}
	list, _ := f.grants.List(context.Background())
	fl.client = list[0].ClientID
	if st, body := f.refresh(fl, result.OldRefresh, ""); st != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("reuse: %d %v", st, body)
	}
	if list, _ = f.grants.List(context.Background()); list[0].Revoked.IsZero() {
		t.Fatal("reusing a refresh token did not end the connection")
	}
}

// The authorization-server scenarios of @modelcontextprotocol/conformance (the release with the
// authorization command): the metadata document and the authorization code grant, with the consent page
// approved in a real browser.
func TestConformanceAuthorizationServer(t *testing.T) {
	f := newFx(t)
	owner := f.browserOwner(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the suite listens on it for the callback
	client := f.client("http://127.0.0.1:" + strconv.Itoa(port) + "/callback")
	out, err := nodeRun(t, 100*time.Second, func(l string) {
		if strings.HasPrefix(l, f.base+"/mcp/oauth/authorize?") {
			owner.approve(l)
		}
	}, "conformance", "authorization", "--url", f.base, "--client-id", client, "--resource", f.base+"/mcp", "--port", strconv.Itoa(port))
	t.Logf("conformance authorization:\n%s", out)
	if err != nil {
		t.Fatalf("conformance authorization: %v", err)
	}
	for _, want := range []string{"authorization-server-metadata-endpoint", "authorization-code-grant"} {
		if !strings.Contains(out, want) {
			t.Errorf("scenario %s did not run", want)
		}
	}
	if list, _ := f.grants.List(context.Background()); len(list) != 1 || list[0].Caps != (keys.Caps{}) {
		t.Fatalf("connections after the suite: %+v", list)
	}
}

package mcptest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerMemory starts the reference @modelcontextprotocol/server-memory (clients/package.json pins its
// version) over stdio through scripts/node.sh, keeping its graph in file, and returns a connected
// client; the server stops when the test ends. Only BOX_SKIP_NODE=1 skips, loudly.
func ServerMemory(t testing.TB, file string) *sdk.ClientSession {
	t.Helper()
	if os.Getenv("BOX_SKIP_NODE") == "1" {
		t.Skip("SKIPPED: BOX_SKIP_NODE=1 — the reference server-memory did not run")
	}
	_, self, _, _ := runtime.Caller(0)
	nodeSh := filepath.Join(filepath.Dir(self), "..", "..", "scripts", "node.sh")
	cmd := exec.Command(nodeSh, "mcp-server-memory")
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	cmd.Stderr = os.Stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "box-test", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting server-memory through scripts/node.sh: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// CallOK calls a tool and fails the test on a protocol error or an isError result.
func CallOK(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := Call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s: %s", name, text)
	}
	return text
}

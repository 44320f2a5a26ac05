// Command testnetprobe is a plain (non-test) binary that tries to turn the sandbox's test network on,
// as a flag or file of the box never could: sandbox's TestTestNetOnlyInTestBinaries runs it.
package main

import (
	"fmt"

	"github.com/boxmem/box/internal/connector"
	"github.com/boxmem/box/internal/sandbox"
)

func main() {
	b, rep := connector.Validate([]byte(`{"name": "p", "what": "p", "egress": ["api.example.com"], "tools": [{"name": "t", "description": "t", "effect": "write", "inputSchema": {"type": "object"}}]}`),
		[]byte(`{"index.mjs": "export const tools = { t: async () => 1 };"}`), connector.Options{})
	if !rep.OK {
		fmt.Print("invalid probe bundle")
		return
	}
	_, err := sandbox.New(sandbox.Config{Bundle: b, Test: &sandbox.TestNet{Hosts: map[string]string{"api.example.com": "127.0.0.1:1"}}})
	fmt.Print(err)
}

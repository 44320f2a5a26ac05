// Command box is the owner's memory: the CLI, the server and the hook handler in one binary.
package main

import (
	"os"

	"github.com/boxmem/box/internal/cli"
	"github.com/boxmem/box/internal/git"
	"github.com/boxmem/box/internal/sandbox"
)

func main() {
	// The sandbox runs connector code in a child process of this binary (docs/CONNECTORS.md, "The
	// sandbox"): the child is recognised before anything else runs.
	if sandbox.IsChild() {
		os.Exit(sandbox.ChildMain())
	}
	// git runs the box binary as its askpass for a backup's token (docs/BACKUP.md): answer and stop.
	if code, ok := git.Askpass(os.Args[1:], os.Getenv, os.Stdout); ok {
		os.Exit(code)
	}
	os.Exit(cli.Main(os.Args[1:], cli.StdIO()))
}

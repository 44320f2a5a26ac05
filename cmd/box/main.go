// Command box is the owner's memory: the CLI, the server and the hook handler in one binary.
package main

import (
	"os"

	"github.com/boxmem/box/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.StdIO()))
}

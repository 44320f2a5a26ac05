package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

// versionOutput is the --json shape of box version.
type versionOutput struct {
	Version string `json:"version"`
	Go      string `json:"go"`
}

func versionCmd(g *Global) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the box version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := versionOutput{Version: Version, Go: runtime.Version()}
			return g.emit(v, func(w io.Writer) { _, _ = fmt.Fprintf(w, "box %s (%s)\n", v.Version, v.Go) })
		},
	}
}

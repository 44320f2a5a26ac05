package cli

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"
)

func (a *App) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the box version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]string{"version": Version, "go": runtime.Version()}
			return a.emit(v, func(w io.Writer) { fmt.Fprintf(w, "box %s (%s)\n", Version, runtime.Version()) })
		},
	}
}

package cli

import "github.com/spf13/cobra"

// verbs lists every verb, one constructor each (one file per verb).
func (a *App) verbs() []*cobra.Command {
	return []*cobra.Command{
		a.versionCmd(),
	}
}

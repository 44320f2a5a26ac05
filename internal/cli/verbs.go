package cli

import "github.com/spf13/cobra"

// verbs lists every verb, one constructor each (one file per verb).
func (a *App) verbs() []*cobra.Command {
	return []*cobra.Command{
		a.rememberCmd(),
		a.forgetCmd(),
		a.searchCmd(),
		a.readCmd(),
		a.overviewCmd(),
		a.recentCmd(),
		a.tidyCmd(),
		a.mergeCmd(),
		a.importCmd(),
		a.exportCmd(),
		a.undoCmd(),
		a.reindexCmd(),
		a.diaryCmd(),
		a.serveCmd(),
		a.mcpCmd(),
		a.keysCmd(),
		a.versionCmd(),
		a.initCmd(),
		a.statusCmd(),
		a.validateCmd(),
		a.wireCmd(),
		a.unwireCmd(),
		a.hookCmd(),
	}
}

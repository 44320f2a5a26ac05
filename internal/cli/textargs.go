package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// textArgs parses the flags cmd knows out of args and returns the rest, in order, as the words of a
// text, for a verb whose argument is free text (cobra's own parsing is off for it). A word that begins
// with a dash but names no flag ("-----BEGIN …", "-5 degrees") is text, so it is never read as a flag
// and echoed in a flag error. "--" ends the flags; -h and --help show the help.
func textArgs(cmd *cobra.Command, args []string) ([]string, error) {
	cmd.InheritedFlags() // merges the root's persistent flags (--box, --json) into cmd.Flags()
	fs := cmd.Flags()
	var flags, text []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			text = append(text, args[i+1:]...)
			break
		}
		f := knownFlag(fs, a)
		if f == nil {
			text = append(text, a)
			continue
		}
		flags = append(flags, a)
		if f.NoOptDefVal == "" && !strings.Contains(a, "=") && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, cmd.FlagErrorFunc()(cmd, err)
	}
	if help, _ := fs.GetBool("help"); help {
		return nil, pflag.ErrHelp
	}
	return text, nil
}

// knownFlag is the flag a word names ("--as", "--json=true", "-h"), or nil.
func knownFlag(fs *pflag.FlagSet, a string) *pflag.Flag {
	switch {
	case strings.HasPrefix(a, "--") && len(a) > 2:
		name, _, _ := strings.Cut(a[2:], "=")
		return fs.Lookup(name)
	case len(a) == 2 && a[0] == '-':
		return fs.ShorthandLookup(a[1:])
	}
	return nil
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/exports"
	"github.com/boxmem/box/internal/jobs"
	"github.com/boxmem/box/internal/server"
)

type serveOptions struct {
	addr    string
	allowed []string
	public  string
	jobs    app.JobOptions
}

// serveOutput is the --json shape of box serve's ready line.
type serveOutput struct {
	Box     string `json:"box"`
	Address string `json:"address"`
	MCP     string `json:"mcp"`
	ID      string `json:"id"`
}

func serveCmd(g *Global) *cobra.Command {
	var o serveOptions
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the box to other assistants over MCP (Streamable HTTP at /mcp)",
		Long: "Serve the box: /mcp for assistants (a key from `box keys new` as Authorization: Bearer mbx_…), /healthz.\n" +
			"With no box found it creates one at $BOX_DIR, else ~/box, and says where. It answers at once; a search\n" +
			"index still catching up is reported, never waited for. --allowed-host lets a reverse proxy's host name in.\n" +
			"--public-url is the address assistants reach (https://box.example.com behind a reverse proxy): the OAuth\n" +
			"issuer and the /mcp resource come from it, and its host is let in.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), g, o) },
	}
	c.Flags().StringVar(&o.addr, "addr", server.DefaultAddr, "address to listen on (loopback unless behind a reverse proxy)")
	c.Flags().StringArrayVar(&o.allowed, "allowed-host", nil, "a Host name a reverse proxy sends, besides loopback names (repeatable)")
	c.Flags().StringVar(&o.public, "public-url", "", "the box's public address, like https://box.example.com (default: the address each request came to)")
	c.Flags().DurationVar(&o.jobs.TidyAfter, "tidy-after", app.DefaultTidyAfter, "file new inbox lines this long after the last one arrived")
	c.Flags().DurationVar(&o.jobs.BackupAfter, "backup-after", app.DefaultBackupAfter, "push to the backups at most this long after a commit")
	c.Flags().StringVar(&o.jobs.NightlyAt, "nightly-at", app.DefaultNightlyAt, "local time (HH:MM) of the nightly tidy, merge pass and caution expiry")
	return c
}

func runServe(ctx context.Context, g *Global, o serveOptions) (err error) {
	public := strings.TrimSuffix(o.public, "/")
	allowed := o.allowed
	if o.jobs.TidyAfter <= 0 || o.jobs.BackupAfter <= 0 {
		return errs.E("cli.serve", errs.Usage, "--tidy-after and --backup-after must be more than zero, like 5m or 30s")
	}
	if _, _, err := jobs.ParseClock(o.jobs.NightlyAt); err != nil {
		return errs.Wrap("cli.serve", errs.Usage, err, "--nightly-at must be a time of day like 03:00")
	}
	if public != "" {
		u, err := url.Parse(public)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return errs.E("cli.serve", errs.Usage, "--public-url must be an address like https://box.example.com")
		}
		allowed = append(allowed, u.Hostname())
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return errs.Wrap("cli.serve", errs.Busy, err, "The server could not listen on "+o.addr+"; is another box serve running? Pick another --addr")
	}
	a, err := g.openOrMake(ctx, app.Serve)
	if err != nil {
		return errors.Join(err, ln.Close())
	}
	defer func() { err = errors.Join(err, a.Close()) }()
	logger := slog.New(slog.NewTextHandler(g.IO.Err, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return a.Run(ctx, app.ServeOptions{Listener: ln, AllowedHosts: allowed, PublicURL: public, Version: Version, Logger: logger, Jobs: o.jobs,
		Export: func(ctx context.Context, root, kind, name string, w io.Writer) error {
			_, err := exports.Stream(ctx, kind, root, name, w, exports.Options{})
			return err
		},
		Ready: func(r app.Ready) {
			out := serveOutput{Box: a.Root, Address: r.Base, MCP: r.Base + "/mcp", ID: a.Box.Marker.ID}
			if err := g.emit(out, func(w io.Writer) {
				_, _ = fmt.Fprintf(w, "box serving %s at %s/mcp\n", a.Root, r.Base)
				_, _ = fmt.Fprintf(w, "ready: claude mcp add --transport http box %s/mcp --header \"Authorization: Bearer <key>\"\n", r.Base)
			}); err != nil {
				g.note("box: %v", err)
			}
			if r.SetupLink != "" {
				g.note("box: make your passkey here (the link works once, for 15 minutes): %s", r.SetupLink)
			}
			g.note("box: make a key with `box keys new --name \"Claude Code\" --memory`; Ctrl-C stops the server")
		}})
}

// openOrMake opens the discovered box, or, when none is found, makes the default one: --box or $BOX_DIR
// when named (a folder that is not a box yet), else ~/box, announced on stderr.
func (g *Global) openOrMake(ctx context.Context, mode app.Mode) (*app.App, error) {
	root, found := g.boxRoot()
	if found == nil {
		o := g.base
		o.Mode, o.Now = mode, g.clock()
		return app.Open(ctx, root, o)
	}
	if !errs.Is(found, errs.NotABox) || g.BoxFlag != "" {
		return nil, found
	}
	dir := g.abs(g.IO.Getenv("BOX_DIR"))
	if dir != "" {
		if _, err := box.ReadMarker(dir); err == nil {
			return nil, found // a box that did not open for another reason
		}
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, errs.Wrap("cli.serve", errs.NotABox, err, "No box was found and there is no home folder to make one in; pass --box DIR")
		}
		dir = filepath.Join(home, "box")
	}
	a, err := makeBox(ctx, dir, mode)
	if err != nil {
		return nil, err
	}
	g.note("box: no box was found, so a new one was made at %s", a.Root)
	return a, nil
}

package app

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/server"
	"github.com/boxmem/box/internal/web"
)

// ServeOptions are box serve's settings.
type ServeOptions struct {
	Listener     net.Listener // where to serve (the caller listens, so it can report a busy port first)
	AllowedHosts []string     // Host names a reverse proxy sends, besides loopback names
	// PublicURL is the box's address as clients see it (https://box.example.com behind a proxy); empty:
	// the address each request came to.
	PublicURL string
	Version   string
	Logger    *slog.Logger // nil: discard
	// Ready hears, once the server is composed and before it serves, where it is and (on a box with no
	// passkey yet) the one-time link that makes the first one.
	Ready func(Ready)
	// Rate and Burst tune the per-connection limit (server.Server's); zero is its default.
	Rate  float64
	Burst int
	// Export writes the box at root as kind to w, for the web UI's export buttons (exports.Stream,
	// bound by the CLI: the exports package's tests compose an App, so the App cannot import it).
	Export func(ctx context.Context, root, kind, name string, w io.Writer) error
	// Jobs are the job runner's settings (docs/JOBS.md).
	Jobs JobOptions
}

// Ready says where a served box is.
type Ready struct {
	Base      string // http://127.0.0.1:7317, or the public URL
	SetupLink string // "" when the box has a passkey already
}

// mcpOnce holds the process's one MCP service.
type mcpOnce struct {
	once sync.Once
	svc  *mcp.Service
}

// MCP is the process's MCP service over its memory, to-dos, state and gate, made once (box serve and
// box mcp). address is the box's public address, for the locked sentence.
func (a *App) MCP(address, version string) *mcp.Service {
	a.mcp.once.Do(func() {
		a.mcp.svc = mcp.New(mcp.Config{Memory: a.Memory, Todos: a.Todos, State: a.State, Gate: a.Gate, Builds: a.Builds, Connectors: a.Connectors, Version: version, Address: address})
	})
	return a.mcp.svc
}

// OwnerName is where the owner's web UI and passkey live when the box is reached on this machine: a
// name of its own under .localhost (browsers resolve it to this machine), so the session cookie is
// never sent to another server the owner opens on localhost (docs/SECURITY.md, docs/OAUTH.md).
const OwnerName = "box.localhost"

// Server composes the HTTP surface over the process's services: /mcp, the OAuth server, the web UI.
func (a *App) Server(o ServeOptions) (*server.Server, *web.Web, error) {
	if o.Listener == nil {
		return nil, nil, errs.E("app.serve", errs.Invalid, "box serve needs an address to listen on")
	}
	public := strings.TrimSuffix(o.PublicURL, "/")
	base := "http://" + o.Listener.Addr().String()
	owner := OwnerName
	if public != "" {
		base, owner = public, ""
		if u, err := url.Parse(public); err == nil {
			a.Connectors.AddBoxHost(u.Hostname()) // no connector reaches the box itself (docs/CONNECTORS.md)
		}
	}
	srv := &server.Server{
		Listener: o.Listener, AllowedHosts: o.AllowedHosts, Keys: a.Keys, State: a.State, Grants: a.Grants, Gate: a.Gate,
		PublicURL: public, BoxID: a.Box.Marker.ID, Version: o.Version, MCP: a.MCP(base, o.Version), Logger: o.Logger,
		Indexing: a.indexing, Rate: o.Rate, Burst: o.Burst, OwnerName: owner,
	}
	ui, err := web.New(web.Config{Box: a.Box, State: a.State, Keys: a.Keys, Todos: a.Todos, Gate: a.Gate, Memory: a.Memory, Brain: a.Brain, Builds: a.Builds, Connectors: a.Connectors, Routines: a.Routines, Jobs: a.Jobs,
		Erase: a.Erase, Backups: a.BackupNames, Freeze: a.Freeze, Now: a.opts.Now, Logger: o.Logger, Grants: a.Grants, Issuer: srv.BaseURL, Secure: strings.HasPrefix(public, "https://"), OwnerName: owner,
		Export: func(ctx context.Context, kind, name string, w io.Writer) error {
			if o.Export == nil {
				return errs.E("app.export", errs.Other, "This server was started without exports.")
			}
			return o.Export(ctx, a.Box.Root, kind, name, w)
		}})
	if err != nil {
		return nil, nil, err
	}
	srv.Web = ui.Handler()
	return srv, ui, nil
}

// Run serves the box until ctx is done, then shuts down gracefully. It is box serve: the job runner
// starts with the server and stops with it.
func (a *App) Run(ctx context.Context, o ServeOptions) (err error) {
	srv, ui, err := a.Server(o)
	if err != nil {
		return err
	}
	defer ui.Close() // uploads still waiting for an import are removed
	jctx, stopJobs := context.WithCancel(ctx)
	defer func() {
		stopJobs()
		a.Jobs.Wait()
		a.jobs.wg.Wait()
	}()
	if err := a.startJobs(jctx, o.Jobs); err != nil {
		return err
	}
	if o.Ready != nil {
		r := Ready{Base: "http://" + o.Listener.Addr().String()}
		owner := r.Base
		if _, port, err := net.SplitHostPort(o.Listener.Addr().String()); err == nil {
			owner = "http://" + OwnerName + ":" + port // a passkey needs a name, not an address
		}
		if o.PublicURL != "" {
			r.Base = strings.TrimSuffix(o.PublicURL, "/")
			owner = r.Base // a passkey belongs to one address: make it where the consent page will ask for it
		}
		if r.SetupLink, err = ui.SetupLink(ctx, owner); err != nil {
			return err
		}
		o.Ready(r)
	}
	return srv.Run(ctx)
}

// indexing reports whether the memory's index is still catching up.
func (a *App) indexing(context.Context) bool { return a.Memory.Indexing() }

// BackupNames names the box's backup remotes, for the erase's warning on the settings page.
func (a *App) BackupNames(ctx context.Context) ([]string, error) {
	rs, err := a.Box.Git().Remotes(ctx)
	var names []string
	for _, r := range rs {
		names = append(names, r.Name)
	}
	return names, err
}

package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/boxmem/box/internal/box"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/grants"
	"github.com/boxmem/box/internal/keys"
	"github.com/boxmem/box/internal/mcp"
	"github.com/boxmem/box/internal/memory"
	"github.com/boxmem/box/internal/server"
	"github.com/boxmem/box/internal/todo"
	"github.com/boxmem/box/internal/validate"
	"github.com/boxmem/box/internal/web"
)

func (a *App) serveCmd() *cobra.Command {
	var addr string
	var allowed []string
	var public string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the box to other assistants over MCP (Streamable HTTP at /mcp)",
		Long: "Serve the box: /mcp for assistants (a key from `box keys new` as Authorization: Bearer mbx_…), /healthz.\n" +
			"With no box found it creates one at $BOX_DIR, else ~/box, and says where. It answers at once; a search\n" +
			"index still catching up is reported, never waited for. --allowed-host lets a reverse proxy's host name in.\n" +
			"--public-url is the address assistants reach (https://box.example.com behind a reverse proxy): the OAuth\n" +
			"issuer and the /mcp resource come from it, and its host is let in.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runServe(cmd.Context(), addr, allowed, public)
		},
	}
	c.Flags().StringVar(&addr, "addr", server.DefaultAddr, "address to listen on (loopback unless behind a reverse proxy)")
	c.Flags().StringArrayVar(&allowed, "allowed-host", nil, "a Host name a reverse proxy sends, besides loopback names (repeatable)")
	c.Flags().StringVar(&public, "public-url", "", "the box's public address, like https://box.example.com (default: the address each request came to)")
	return c
}

// service is what serve and mcp share: the open box, its memory, to-dos and state, and the MCP service.
type service struct {
	root   string
	box    *box.Box
	keys   *keys.Store
	todos  *todo.Store
	mcp    *mcp.Service
	mem    *memory.Memory // set once opened; read only after opened is closed
	opened chan struct{}
}

// Close waits for the memory to finish opening, then closes everything.
func (s *service) Close() {
	<-s.opened
	if s.mem != nil {
		s.mem.Close()
	}
	s.keys.Close()
	s.box.Close()
}

// memory is the open memory, or nil while it is still opening.
func (s *service) memory() *memory.Memory {
	select {
	case <-s.opened:
		return s.mem
	default:
		return nil
	}
}

// indexing reports whether the memory is still opening or its index still catching up.
func (s *service) indexing(ctx context.Context) bool {
	select {
	case <-s.opened:
	default:
		return true
	}
	if s.mem == nil {
		return false
	}
	o, err := s.mem.Overview(ctx)
	return err == nil && o.Indexing
}

// openService opens the box for serving; create makes the default box when none is found. The memory
// opens in the background so the server answers at once, whatever the memory's size; its tools say
// "still opening" meanwhile, and if it cannot open, say so.
func (a *App) openService(ctx context.Context, create bool, address string) (*service, error) {
	root, err := a.serveRoot(ctx, create)
	if err != nil {
		return nil, err
	}
	s := &service{root: root, opened: make(chan struct{})}
	if s.box, err = box.OpenWith(root, box.Options{Validate: validate.Writes}); err != nil {
		return nil, err
	}
	if s.keys, err = keys.Open(root, nil); err != nil {
		s.box.Close()
		return nil, err
	}
	s.todos = todo.New(s.box)
	s.mcp = mcp.New(mcp.Config{Todos: s.todos, State: s.keys, Version: Version, Address: address,
		Gate: gate.New(s.box, nil), Root: root})
	s.mcp.Opening()
	go func() {
		defer close(s.opened)
		m, err := memory.Open(ctx, root, memory.Options{Watch: true})
		if err != nil {
			a.note("box: the memory could not be opened, so its tools will say so: %v", err)
			s.mcp.Opened(nil, err)
			return
		}
		s.mem = m
		s.mcp.Opened(m, nil)
	}()
	return s, nil
}

// serveRoot is the discovered box, else the default box (made when create is set).
func (a *App) serveRoot(ctx context.Context, create bool) (string, error) {
	root, err := a.boxRoot()
	if err != nil {
		return a.defaultBox(ctx, err, create)
	}
	return root, nil
}

// defaultBox is the box serve uses when discovery found none: --box or $BOX_DIR if it is a box, else
// a new box there (or at ~/box), announced on stderr.
func (a *App) defaultBox(ctx context.Context, found error, create bool) (string, error) {
	dir := a.BoxFlag
	if dir == "" {
		dir = a.IO.Getenv("BOX_DIR")
	}
	if dir != "" {
		if _, err := box.ReadMarker(dir); err == nil {
			return filepath.Abs(dir)
		}
	}
	if !create || !errs.Is(found, errs.NotABox) || a.BoxFlag != "" {
		return "", found
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errs.Wrap("cli.serve", errs.NotABox, err, "No box was found and there is no home folder to make one in; pass --box DIR")
		}
		dir = filepath.Join(home, "box")
	}
	b, err := makeBox(ctx, dir)
	if err != nil {
		return "", err
	}
	defer b.Close()
	a.note("box: no box was found, so a new one was made at %s", b.Root)
	return b.Root, nil
}

func (a *App) runServe(ctx context.Context, addr string, allowed []string, public string) error {
	public = strings.TrimSuffix(public, "/")
	if public != "" {
		u, err := url.Parse(public)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return errs.E("cli.serve", errs.Usage, "--public-url must be an address like https://box.example.com")
		}
		allowed = append(allowed, u.Hostname())
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errs.Wrap("cli.serve", errs.Busy, err, "The server could not listen on "+addr+"; is another box serve running? Pick another --addr")
	}
	base := "http://" + ln.Addr().String()
	if public != "" {
		base = public
	}
	s, err := a.openService(ctx, true, base)
	if err != nil {
		ln.Close()
		return err
	}
	defer s.Close()
	logger := slog.New(slog.NewTextHandler(a.IO.Err, &slog.HandlerOptions{Level: slog.LevelInfo}))
	gs, err := grants.Open(s.root, nil)
	if err != nil {
		return err
	}
	defer gs.Close()
	srv := &server.Server{
		Listener: ln, AllowedHosts: allowed, Keys: s.keys, Grants: gs, PublicURL: public, BoxID: s.box.Marker.ID, Version: Version,
		MCP: s.mcp, Indexing: s.indexing, Logger: logger,
	}
	ui, err := web.New(web.Config{Box: s.box, Keys: s.keys, Todos: s.todos, Memory: s.memory, Logger: logger, Grants: gs,
		Issuer: srv.BaseURL, Secure: strings.HasPrefix(public, "https://")})
	if err != nil {
		return err
	}
	defer ui.Close()
	srv.Web, srv.Gate = ui.Handler(), ui.Gate()
	out := map[string]any{"box": s.root, "address": base, "mcp": base + "/mcp", "id": s.box.Marker.ID}
	a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "box serving %s at %s/mcp\n", s.root, base)
		fmt.Fprintf(w, "ready: claude mcp add --transport http box %s/mcp --header \"Authorization: Bearer <key>\"\n", base)
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	owner := "http://localhost:" + port
	if public != "" {
		owner = public // a passkey belongs to one address: make it where the consent page will ask for it
	}
	if link, err := ui.SetupLink(ctx, owner); err == nil && link != "" {
		a.note("box: make your passkey here (the link works once, for 15 minutes): %s", link)
	}
	a.note("box: make a key with `box keys new --name \"Claude Code\" --memory`; Ctrl-C stops the server")
	return srv.Run(ctx)
}

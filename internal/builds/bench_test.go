package builds_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/app"
	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/page"
	"github.com/boxmem/box/internal/passkeytest"
)

// BenchmarkServePage is what the server does for each load of /s/<slug>/ before writing: read the
// record, read and re-hash the version's bytes, inject the bridge (which parses the page again).
func BenchmarkServePage(b *testing.B) {
	garden, err := os.ReadFile("testdata/garden.html")
	if err != nil {
		b.Fatal(err)
	}
	big := "<!doctype html><title>Big</title><p>" + strings.Repeat("tomatoes by the fence ", 22000) + "</p>"
	a, err := app.Init(context.Background(), b.TempDir(), nil, "true", app.Options{Now: passkeytest.NewClock().Now, VaultDir: filepath.Join(b.TempDir(), "vault")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	ctx := context.Background()
	for slug, html := range map[string]string{"garden": string(garden), "big": big} {
		p, err := a.Builds.ProposePage(ctx, builds.PageInput{Name: slug, Own: slug, What: "x", HTML: html}, claude)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Gate.Approve(ctx, p.Card.ID, gate.By{Via: "cli", Local: true}); err != nil {
			b.Fatal(err)
		}
	}
	for _, slug := range []string{"garden", "big"} {
		b.Run(slug, func(b *testing.B) {
			for b.Loop() {
				bd, err := a.Builds.Page(ctx, slug)
				if err != nil {
					b.Fatal(err)
				}
				src, err := a.Builds.Source(bd, bd.Version)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := page.Inject(src, page.Bridge{Box: "http://localhost:7317", Slug: slug, Version: bd.Version, Token: "0123456789abcdef0123456789abcdef"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

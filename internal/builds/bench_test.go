package builds_test

import (
	"context"
	"strings"
	"testing"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/page"
)

// BenchmarkServePage is what the server does for each load of /s/<slug>/ before writing: read the
// record, read and re-hash the version's bytes, inject the bridge (which parses the page again).
func BenchmarkServePage(b *testing.B) {
	big := "<!doctype html><title>Big</title><p>" + strings.Repeat("tomatoes by the fence ", 22000) + "</p>"
	a := newApp(b)
	ctx := context.Background()
	for slug, html := range map[string]string{"garden": garden(b), "big": big} {
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

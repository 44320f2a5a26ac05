package web

import (
	"time"

	"github.com/boxmem/box/internal/builds"
	"github.com/boxmem/box/internal/gate"
	"github.com/boxmem/box/internal/tabs"
)

// sampleTabs are the default tabs and an installed page, as frameScreen makes them.
func sampleTabs() []tabView {
	var out []tabView
	for _, t := range tabs.Default().Tabs {
		out = append(out, tabView{ID: t.ID, Label: t.Label, Icon: tabIcons[t.ID], Href: "/" + t.ID})
	}
	return append(out, tabView{ID: "page:garden", Label: "Garden", Icon: "🌱", Href: "/pages/garden"})
}

// buildSamples are the data of the pages templates, and a Today with a build's card, every branch run.
func buildSamples() map[string]page {
	at := time.Date(2028, 2, 29, 23, 59, 59, 0, time.Local)
	signed := frame{CSRF: "token", SignedIn: true, Menu: tabs.MenuHamburger, Look: 2}
	v := builds.Version{N: 1, SHA256: "ab", Size: 10, Changelog: "The first version.", By: gate.Proposer{Who: "Claude"}, At: at}
	v2 := v
	v2.N, v2.Failed = 2, true
	b := builds.Build{Kind: builds.KindPage, ID: "garden", Name: "Garden", Emoji: "🌱", What: "Plants.", Read: []string{"moc-home"}, Status: builds.StatusOn, Version: 1, Versions: []builds.Version{v, v2}}
	off := b
	off.Status = builds.StatusOff
	card := cardView{ApprovalCard: gate.ApprovalCard{ID: "c2", Kind: "new-page", Summary: "Garden"}, KindTitle: "New page", Sender: "Claude (claude.ai)",
		Facts: []cardFact{{Label: "What it's for", Text: "Plants"}, {Label: "What else it may read", Text: "moc-home", Bold: true}, {Label: "The CSS", Text: "body{}", Pre: true}, {Text: "It can't reach the internet."}}}
	today := samples()["today"].(*todayData)
	today.Cards = append(today.Cards, card)
	return map[string]page{
		"pages":  &pagesData{frame: signed, Pages: []builds.Build{b}, Safe: true},
		"holder": &holderData{frame: signed, Build: b, Sandbox: "allow-scripts allow-forms"},
		"builds": &buildsData{frame: signed, Builds: []buildView{{Build: b, Writers: "Claude", Versions: b.Versions}, {Build: off, Versions: []builds.Version{v}}}, Safe: true},
		"today":  today,
	}
}

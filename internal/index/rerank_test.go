package index

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestSnippetAndText(t *testing.T) {
	ix := mustOpen(t)
	long := strings.Repeat("Filler words about nothing in particular here. ", 30)
	put(t, ix,
		note("/short", "Short", "Leo plays the cello in Lisbon."),
		note("/long", "Long", long+"\n- Mia said Leo plays the cello on Thursdays at the school.\n"+long),
		note("/title", "Cellist", "a friend"),
		note("/far", "Far", strings.Repeat("padding text goes on and on. ", maxReadBytes/29+10)+"zebra cello"),
		note("/ana", "Ana", "# Ana\n\n## Snapshot\n\n## Key facts\n- My sister Ana lives in Porto. ^k3x9a2mq\n- Ana's daughter Lia is 7.\n\n## Timeline\n"),
	)
	for _, tc := range []struct {
		q, path, snippet, text string
	}{
		{"cello lisbon", "/short", "Leo plays the **cello** in **Lisbon**.", "Leo plays the cello in Lisbon."},
		{`"plays the cello" thursdays`, "/long", "…particular here. \n- Mia said Leo **plays the cello** on **Thursdays** at the school.\nFiller words about…",
			"- Mia said Leo plays the cello on Thursdays at the school."},
		{"cellist", "/title", "**Cellist**", "Cellist"},
		{"cell*", "/title", "**Cellist**", "Cellist"},
		// A match past the part search reads is found all the same; its snippet is the start.
		{"zebra", "/far", "padding text goes on and on. padding text goes on and on. padding text goes on…",
			"padding text goes on and on. padding text goes on and on. padding text goes on…"},
		// A heading repeats the title: the line that says something about Ana is shown, not "# Ana".
		{"ana", "/ana", "# **Ana**\n\n## Snapshot\n\n## Key facts\n- My sister **Ana** lives in Porto. ^k3x9a2mq\n- **Ana**'s daughter Lia is…",
			"- My sister Ana lives in Porto. ^k3x9a2mq"},
		// A word only a heading holds is shown there.
		{"timeline ana", "/ana", "…My sister **Ana** lives in Porto. ^k3x9a2mq\n- **Ana**'s daughter Lia is 7.\n\n## **Timeline**",
			"- My sister Ana lives in Porto. ^k3x9a2mq\n- Ana's daughter Lia is 7.\n\n## Timeline"},
	} {
		hits := search(t, ix, Query{Text: tc.q})
		var h *Hit
		for i := range hits {
			if hits[i].Path == tc.path {
				h = &hits[i]
			}
		}
		if h == nil {
			t.Errorf("%q: %s not found in %v", tc.q, tc.path, paths(hits))
			continue
		}
		if h.Snippet != tc.snippet || h.Text != tc.text {
			t.Errorf("%q:\n snippet %q\n    want %q\n text %q\n want %q", tc.q, h.Snippet, tc.snippet, h.Text, tc.text)
		}
	}
}

// TestMatcherAgreesWithFTS5: for every term of every query and every document, the Go reading finds the
// term exactly when FTS5 says the document matches it: proximity and snippets see what the index sees.
func TestMatcherAgreesWithFTS5(t *testing.T) {
	ix := mustOpen(t)
	docs := []string{
		"Leo plays the cello in Lisbon; he is a cellist.",
		"Mia runs marathons, running every morning; she ran in Porto.",
		"The happiness of relational databases. Swimmers swimming, swam.",
		"Café naïve résumé, ZÜRICH and São Paulo. e-mail leo@example.com",
		"plays cello the plays the the cello",
	}
	for i, d := range docs {
		put(t, ix, note(fmt.Sprintf("/%d", i), "", d))
	}
	queries := []string{
		"cello", "cell*", "run", "running", "ran", "marathon*", `"plays the cello"`, `"the cello"`, `"cello plays"`,
		"happy", "happi*", "relational", "relat*", "swimming", "swim*", "cafe", "zurich", "sao paulo", "e mail",
		"mail*", "leo example", `"leo example com"`, "résumé", "naive", "swimming*",
	}
	for _, qt := range queries {
		terms := parse(qt)
		m := newMatcher(terms, func() error { return nil })
		for i := range docs {
			var f [nFields]string
			var id int64
			if err := ix.rdb.QueryRow(`SELECT fts.rowid, title, aliases, description, body FROM fts JOIN docs d ON d.id = fts.rowid WHERE d.path = ?`, fmt.Sprintf("/%d", i)).
				Scan(&id, &f[0], &f[1], &f[2], &f[3]); err != nil {
				t.Fatal(err)
			}
			d, err := m.read(f)
			if err != nil {
				t.Fatal(err)
			}
			for ti, tm := range terms {
				var n int
				if err := ix.rdb.QueryRow(`SELECT count(*) FROM fts WHERE fts MATCH ? AND rowid = ?`, tm.fts(), id).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if got := len(d.hits[ti]) > 0; got != (n > 0) {
					t.Errorf("term %s in doc %d: Go %v, FTS5 %v", tm.fts(), i, got, n > 0)
				}
			}
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		a, b   []int
		lo, hi int
		want   int
	}{
		{[]int{1, 5}, []int{2, 3, 9}, 1, 3, 2},  // 1→2, 1→3; 5→(6..8) none
		{[]int{1, 5}, []int{2, 3, 9}, -8, 8, 6}, // every pair is within 8
		{[]int{4}, []int{4}, -8, 8, 0},          // one token is not a pair
		{[]int{4, 4}, []int{3, 4, 5}, -1, 1, 4}, // each 4 pairs with 3 and 5
		{nil, []int{1}, -8, 8, 0},
	} {
		if got := within(tc.a, tc.b, tc.lo, tc.hi); got != tc.want {
			t.Errorf("within(%v, %v, %d, %d) = %d, want %d", tc.a, tc.b, tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestProximityRanks: of two notes holding the same words once each, the one where they stand together
// ranks first.
func TestProximityRanks(t *testing.T) {
	ix := mustOpen(t)
	filler := strings.Repeat("and some other words here ", 6)
	put(t, ix,
		note("/apart", "A", "coconut "+filler+"milk "+filler+"ice "+filler+"cream"),
		note("/together", "B", filler+"coconut milk ice cream "+filler),
	)
	hits := search(t, ix, Query{Text: "coconut milk ice cream"})
	if len(hits) != 2 || hits[0].Path != "/together" {
		t.Fatalf("got %v", paths(hits))
	}
	_ = context.Background
}

// TestFarPairsRank: terms not next to each other in the query count as a pair too. Both notes hold
// "rowing" far from "lisbon" and "lake"; only one holds "lisbon" and "lake" together.
func TestFarPairsRank(t *testing.T) {
	ix := mustOpen(t)
	filler := strings.Repeat("and some other words here ", 6)
	put(t, ix,
		note("/apart", "A", "lisbon "+filler+"lake "+filler+"rowing"),
		note("/near", "B", "lisbon lake "+filler+filler+"rowing"),
	)
	hits := search(t, ix, Query{Text: "lisbon rowing lake"})
	if len(hits) != 2 || hits[0].Path != "/near" {
		t.Fatalf("got %v", paths(hits))
	}
}

func TestATXHeading(t *testing.T) {
	for prefix, want := range map[string]bool{
		"# ": true, "## ": true, "###### ": true, "#\t": true, "   # ": true, "# **": true,
		"#": false, "####### ": false, "    # ": false, "- ": false, "": false, "#tag ": false, "x # ": false,
	} {
		if got := atxHeading(prefix); got != want {
			t.Errorf("atxHeading(%q) = %v, want %v", prefix, got, want)
		}
	}
}

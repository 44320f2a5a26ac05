// Package look owns what a look change may be: CSS of at most 3,500 characters, applied on top of the
// owner's web UI, using only the selectors, properties and values of the allow-list in docs/PAGES.md
// ("Looks"). It reads CSS with internal/css and refuses with reasons; it stores and serves nothing.
package look

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/boxmem/box/internal/css"
	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/page"
)

// MaxChars is the longest look change, in characters.
const MaxChars = 3500

// Problem is one reason a look change is refused; it has the shape of a page's.
type Problem = page.Problem

// Check refuses CSS that breaks a rule of docs/PAGES.md ("Looks") with one sentence naming each
// problem; nil when it may go on a card.
func Check(src string) error {
	ps := Problems(src)
	if len(ps) == 0 {
		return nil
	}
	return errs.E("look.check", errs.Invalid, "%s", page.Sentence(ps))
}

// Problems lists everything a look change can't have, in line order (at most page.MaxProblems).
func Problems(src string) []Problem {
	switch n := utf8.RuneCountInString(src); {
	case !utf8.ValidString(src):
		return []Problem{{Found: "bytes that are not UTF-8", Why: "a look is UTF-8 text"}}
	case n > MaxChars:
		return []Problem{{Found: fmt.Sprintf("%d characters", n), Why: fmt.Sprintf("a look is at most %d characters: keep what matters", MaxChars)}}
	case strings.TrimSpace(src) == "":
		return []Problem{{Found: "nothing", Why: "the look is empty"}}
	}
	c := &checker{seen: map[Problem]bool{}}
	if i := strings.IndexByte(src, '<'); i >= 0 {
		c.add(Problem{Line: 1 + strings.Count(src[:i], "\n"), Found: "<", Why: whyMarkup})
	}
	for _, r := range css.Stylesheet(src) {
		c.rule(r, 0)
	}
	return page.Ordered(c.out)
}

const (
	whyMarkup     = "a look is CSS only: markup would end it early"
	whyAtRule     = "a look may use @media and nothing else: no imports, fonts, animations or layers"
	whyNoBlock    = "every selector needs a { … } block"
	whyUnclosed   = "a block or function is never closed"
	whyNested     = "a look's rules are flat: no nested rules or at-rules inside a block"
	whyImportant  = "a look can't override the box's own rules by force"
	whyNotDecl    = "this is not a property: value declaration"
	whyProtected  = "a look can't restyle buttons, fields, cards or dialogs"
	whyUniversal  = "* reaches buttons, fields, cards and dialogs too: name what to style"
	whyType       = "a look styles the box's text, headings, lists, links and tables; this element is not one of them"
	whyClass      = "a look may style only the classes listed in docs/PAGES.md (Looks)"
	whyID         = "a look can't pick single elements by id"
	whyPseudo     = "this pseudo-class or pseudo-element is not on the allow-list"
	whyAttribute  = "a look may test only the attributes aria-current, lang and dir"
	whySelector   = "this selector can't be read as the simple selectors a look may use"
	whyProperty   = "a look may set colours, fonts, text size (12px and up), spacing, corners, borders and small shadows; not this property"
	whyVariable   = "the box's UI has no such variable; a look may set those listed in docs/PAGES.md (Looks)"
	whyFunction   = "a look's values are plain: no url(), var(), calc(), env(), attr() or expressions"
	whyValue      = "this value is not allowed for this property (see docs/PAGES.md, Looks)"
	whyMediaQuery = "a media query may test only features and numbers"
)

type checker struct {
	out  []Problem
	seen map[Problem]bool
}

func (c *checker) add(p Problem) {
	if p.Found = page.Clip(p.Found); p.Found == "" {
		p.Found = "(nothing)"
	}
	if !c.seen[p] {
		c.seen[p] = true
		c.out = append(c.out, p)
	}
}

func (c *checker) rule(r css.Rule, depth int) {
	switch {
	case r.At != "" && (depth > 0 || !strings.EqualFold(r.At, "media")):
		why := whyAtRule
		if depth > 0 {
			why = whyNested
		}
		c.add(Problem{Line: r.Line, Found: "@" + r.At, Why: why})
		return
	case r.Body == nil:
		found := show(r.Prelude)
		if r.At != "" {
			found = strings.TrimSpace("@" + r.At + " " + found)
		}
		c.add(Problem{Line: r.Line, Found: found, Why: whyNoBlock})
		return
	}
	if r.Body.Unclosed {
		c.add(Problem{Line: r.Body.Line, Found: "{", Why: whyUnclosed})
	}
	if r.At != "" {
		c.mediaQuery(r.Prelude)
		for _, inner := range css.Rules(r.Body.Children) {
			c.rule(inner, depth+1)
		}
		return
	}
	c.selector(r.Prelude)
	decls := map[string]css.Declaration{} // each allowed property's last value, for legible
	for _, it := range css.Declarations(r.Body.Children) {
		switch {
		case it.Rule != nil:
			c.add(Problem{Line: it.Line, Found: "@" + it.Rule.At, Why: whyNested})
		case it.Decl == nil:
			why := whyNotDecl
			for _, n := range it.Junk {
				if n.Block && n.Type == css.LeftBrace {
					why = whyNested
				}
			}
			c.add(Problem{Line: it.Line, Found: show(it.Junk), Why: why})
		default:
			if c.declaration(*it.Decl) {
				decls[strings.ToLower(it.Decl.Name)] = *it.Decl
			}
		}
	}
	c.legible(decls)
}

// mediaQuery allows features, keywords, numbers and lengths: (prefers-color-scheme: dark), (min-width: 600px).
func (c *checker) mediaQuery(ns []css.Node) {
	css.Walk(ns, func(n css.Node) bool {
		switch {
		case n.Block && n.Type == css.LeftParen:
		case n.Type == css.Ident, n.Type == css.Whitespace, n.Type == css.Colon, n.Type == css.Comma,
			n.Type == css.Number, n.Type == css.Dimension, n.Type == css.Percentage:
		case n.Type == css.Delim && strings.Contains("/<>=", n.Value):
		default:
			c.add(Problem{Line: n.Line, Found: n.String(), Why: whyMediaQuery})
		}
		if n.Unclosed {
			c.add(Problem{Line: n.Line, Found: n.String(), Why: whyUnclosed})
		}
		return true
	})
}

// show renders nodes back as short CSS for a sentence.
func show(ns []css.Node) string {
	var b strings.Builder
	for _, n := range ns {
		switch {
		case n.Block:
			b.WriteString(n.String())
			b.WriteString(show(n.Children))
			b.WriteString(map[css.Type]string{css.LeftParen: ")", css.LeftBracket: "]", css.LeftBrace: "}"}[n.Type])
		case n.Type == css.Function:
			b.WriteString(n.String())
			b.WriteString(show(n.Children))
			b.WriteString(")")
		default:
			b.WriteString(n.String())
		}
	}
	return strings.TrimSpace(b.String())
}

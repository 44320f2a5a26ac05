package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/inbox"
	"github.com/boxmem/box/internal/layout"
	"github.com/boxmem/box/internal/lazyregexp"
	"github.com/boxmem/box/internal/note"
	"github.com/boxmem/box/internal/secret"
)

// A tidy is two steps with a seam between them: a planner proposes a Plan (filing actions as data),
// and CheckPlan decides whether any plan may be applied. The deterministic planner (tidy.go) is one
// proposer; a brain's structured output is another, and goes through the same CheckPlan.

// Action ops.
const (
	ActCreate  = "create"  // a new note stub: Note, Kind, Title, Map
	ActFile    = "file"    // a line becomes a Key fact of Note; Links are the other notes it names
	ActReplace = "replace" // a line replaces the fact Old of Note, which moves to the Timeline dated OldDate
	ActDrop    = "drop"    // a line goes to the trash: Reason
	ActCore    = "core"    // an own line becomes a core fact of the router (never an outside line)
	ActCaution = "caution" // an own line becomes a caution of the router (never an outside line)
	ActMerge   = "merge"   // the note Note is joined into Into and archived, never deleted
)

// Drop reasons: why a line went to the trash instead of a note (docs/SECRETS.md, "What tidy drops").
const (
	DropSecret      = "secret"      // secret-like text
	DropInstruction = "instruction" // aimed at an assistant: "Always answer in Spanish"
	DropChatter     = "chatter"     // an assistant talking about itself: "I've saved that for you!"
	DropGreeting    = "greeting"    // "Hi Claude!", "Good night"
	DropQuestion    = "question"    // asks instead of telling: "When is Leo's swim practice?"
	DropSmallTalk   = "small-talk"  // "We had a nice chat today, lol", "thanks!"
)

// Action is one filing decision.
type Action struct {
	Op      string   `json:"op"`
	Day     string   `json:"day,omitempty"`  // the line's inbox day file, a box path
	Line    string   `json:"line,omitempty"` // the line's id
	Text    string   `json:"text,omitempty"` // the fact as filed
	Note    string   `json:"note,omitempty"` // the target note (entity-leo); for merge, the note archived
	Old     string   `json:"old,omitempty"`  // replace: the fact replaced (its text or id)
	OldDate string   `json:"oldDate,omitempty"`
	Kind    string   `json:"kind,omitempty"`  // create: person, org, place, topic …
	Title   string   `json:"title,omitempty"` // create
	Map     string   `json:"map,omitempty"`   // create: the map listing it
	Links   []string `json:"links,omitempty"` // file, replace: notes linked both ways
	Into    string   `json:"into,omitempty"`  // merge: the note kept
	Reason  string   `json:"reason,omitempty"`
}

// Plan is a whole tidy as data; Skipped says what the planner left alone and why.
type Plan struct {
	Actions []Action `json:"actions"`
	Skipped []string `json:"skipped,omitempty"`
}

var (
	mapNameRe  = lazyregexp.New(`^moc-[a-z0-9][a-z0-9-]*$`)
	noteKinds  = []string{"person", "org", "place", "topic", "project", "event", "thing", "other"}
	dropReason = []string{DropSecret, DropInstruction, DropChatter, DropGreeting, DropQuestion, DropSmallTalk}
)

// CheckPlan reports, as one Invalid error naming the action, the first thing in p that may not be
// applied to the memory as v shows it: a line that is not in the inbox or is used twice, a note that
// does not exist (or is broken, or was merged away), a stub whose name is taken or against its kind,
// a stub titled with a pronoun or with secret-like text, a secret or an instruction filed as a fact
// (the fact becomes the note's description too), and an outside line made a core fact or a caution or
// filed, replacing or linked in the note that keeps the core facts the router leaves out.
func CheckPlan(v View, p Plan) error {
	lines := map[string]inbox.Line{}
	loaded := map[string]bool{}
	used := map[string]bool{}
	created := map[string]bool{}
	merged := map[string]bool{}
	for i, a := range p.Actions {
		fail := func(format string, args ...any) error {
			return errs.E("memory.plan", errs.Invalid, "tidy action %d (%s): %s", i+1, a.Op, fmt.Sprintf(format, args...))
		}
		noteOK := func(name string) error {
			switch {
			case merged[name]:
				return fail("the note %s was merged away earlier in the plan", name)
			case created[name]:
				return nil
			}
			if strings.ContainsAny(name, "/\\") || name == "" {
				return fail("%q is not a note name", name)
			}
			data, err := readOr(v, notePath(name), nil)
			if err != nil || data == nil {
				return fail("there is no note %s", name)
			}
			if _, err := note.ParseNote(data); err != nil {
				return fail("the note %s has broken frontmatter and is left alone", name)
			}
			return nil
		}
		switch a.Op {
		case ActCreate:
			switch {
			case !slices.Contains(noteKinds, a.Kind):
				return fail("the kind %q is not one of %s", a.Kind, strings.Join(noteKinds, ", "))
			case strings.TrimSpace(a.Title) == "" || strings.ContainsAny(a.Title, "\n\r"):
				return fail("a new note needs a one-line title")
			case pronoun(a.Title):
				return fail("%q is a pronoun, not a name; a line about the owner goes to %s", a.Title, ownerName)
			case secretLike(a.Title):
				return fail("secret-like text is never a note's title")
			case note.Name(a.Kind, a.Title) != a.Note:
				return fail("a %s titled %q is named %s, not %s", a.Kind, a.Title, note.Name(a.Kind, a.Title), a.Note)
			case created[a.Note] || v.Exists(notePath(a.Note)):
				return fail("the note %s already exists", a.Note)
			case a.Map != "" && !mapNameRe.MatchString(a.Map):
				return fail("%q is not a map name (moc-people)", a.Map)
			}
			created[a.Note] = true
		case ActFile, ActReplace, ActDrop, ActCore, ActCaution:
			if !strings.HasPrefix(a.Day, layout.InboxDir+"/") || strings.Contains(a.Day, "..") {
				return fail("%q is not an inbox day file", a.Day)
			}
			if !loaded[a.Day] {
				loaded[a.Day] = true
				data, _ := readOr(v, a.Day, nil)
				for _, l := range inbox.LinesOf(data) {
					lines[a.Day+"#"+l.ID] = l
				}
			}
			key := a.Day + "#" + a.Line
			l, ok := lines[key]
			switch {
			case !ok:
				return fail("there is no inbox line %s in %s", a.Line, a.Day)
			case used[key]:
				return fail("the line %s is filed twice", a.Line)
			}
			used[key] = true
			if a.Op == ActDrop {
				if !slices.Contains(dropReason, a.Reason) {
					return fail("a drop needs a reason: %s", strings.Join(dropReason, ", "))
				}
				continue
			}
			if err := checkFact(a.Text); err != "" {
				return fail("%s", err)
			}
			if (a.Op == ActCore || a.Op == ActCaution) && l.Trust != inbox.Own {
				return fail("an outside line never becomes a core fact or a caution")
			}
			if l.Trust != inbox.Own && (a.Note == overflowNote || slices.Contains(a.Links, overflowNote)) {
				return fail("an outside line never touches %s, which keeps core facts and cautions", overflowNote)
			}
			if a.Op == ActCore || a.Op == ActCaution {
				continue
			}
			if err := noteOK(a.Note); err != nil {
				return err
			}
			for _, t := range a.Links {
				if err := noteOK(t); err != nil {
					return err
				}
			}
			if a.Op == ActReplace && strings.TrimSpace(a.Old) == "" {
				return fail("a replace names the fact it replaces")
			}
		case ActMerge:
			if a.Note == a.Into {
				return fail("a note cannot be merged into itself")
			}
			if err := noteOK(a.Note); err != nil {
				return err
			}
			if err := noteOK(a.Into); err != nil {
				return err
			}
			merged[a.Note] = true
		default:
			return fail("unknown action")
		}
	}
	return nil
}

// pronouns are never the title of a note: "Me", "I", "She" name no one in particular.
var pronouns = set("i me my mine myself you your yours yourself he him his she her hers we us our ours they them their theirs it its one someone somebody everyone everybody")

func pronoun(title string) bool { return pronouns[strings.ToLower(strings.TrimSpace(title))] }

func secretLike(text string) bool {
	_, found := secret.Secret(text)
	return found
}

// checkFact says why text may not become a fact, or "".
func checkFact(text string) string {
	switch {
	case strings.TrimSpace(text) == "" || strings.ContainsAny(text, "\n\r"):
		return "a fact is one non-empty line"
	case len([]rune(text)) > secret.MaxFactLen:
		return "a fact is a sentence or two, not a page"
	case secret.Instruction(text):
		return "an instruction aimed at an assistant is never filed as a fact"
	}
	if secretLike(text) {
		return "secret-like text is never filed"
	}
	return ""
}

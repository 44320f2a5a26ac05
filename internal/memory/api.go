package memory

import (
	"time"

	"github.com/boxmem/box/internal/box"
)

// The shapes below are the memory's API, shared by every surface (CLI, MCP, web, pages, hooks).
// JSON tags are the stable --json and MCP shapes: fields may be added, never changed.

// Actor says who asks: the owner, a named assistant and its host, a page. Trust is "own" for the
// owner's own words (CLI, web, chat) and "outside" for everything else (MCP, pages, imports). It is
// the box's actor, so a memory change carries it into the diary and the commit unchanged.
type Actor = box.Actor

// RememberInput is one plain fact.
type RememberInput struct {
	Text string `json:"text"`
	Core bool   `json:"core,omitempty"` // a core fact for the router; only the owner's own words may be core
	// Caution makes it a live warning of the router until the end of the day Until (YYYY-MM-DD, local);
	// only the owner's own words may be a caution.
	Caution bool   `json:"caution,omitempty"`
	Until   string `json:"until,omitempty"`
}

// RememberResult says where the line went.
type RememberResult struct {
	ID    string `json:"id"`    // the inbox line id
	Path  string `json:"path"`  // the inbox day file, a box path
	Entry string `json:"entry"` // the diary entry, for undo
	Text  string `json:"text"`  // a sentence for the user: "Saved to the inbox: …"
}

// ForgetInput names the words every removed line must contain, as whole words.
type ForgetInput struct {
	Words   string `json:"words"`
	Confirm bool   `json:"confirm,omitempty"` // needed when more than MaxForgetUnconfirmed lines match
}

// MaxForgetUnconfirmed is how many lines forget removes without an explicit confirmation.
const MaxForgetUnconfirmed = 5

// Match is one line forget found.
type Match struct {
	Path string `json:"path"`
	ID   string `json:"id,omitempty"`
	Text string `json:"text"`
}

// ForgetResult lists what matched and whether it was removed.
type ForgetResult struct {
	Matched      []Match `json:"matched"`
	Removed      int     `json:"removed"`
	NeedsConfirm bool    `json:"needsConfirm"`
	Entry        string  `json:"entry,omitempty"`
	Text         string  `json:"text"`
}

// SearchInput is a search with optional filters.
type SearchInput struct {
	Words string    `json:"words"`
	Limit int       `json:"limit,omitempty"`
	Kind  string    `json:"kind,omitempty"` // note, map, router, core, inbox, doc
	Map   string    `json:"map,omitempty"`  // moc-people
	Who   string    `json:"who,omitempty"`
	Trust string    `json:"trust,omitempty"` // own or outside
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// Hit is one search result. Partial hits hold fewer of the words than the match rule asks; they come
// after every full match (docs/SEARCH.md).
type Hit struct {
	Path    string  `json:"path"`
	Name    string  `json:"name,omitempty"` // entity-leo, for read
	Kind    string  `json:"kind"`
	Title   string  `json:"title,omitempty"`
	Snippet string  `json:"snippet"` // the passage, matched words marked **like this**
	Text    string  `json:"text"`    // the plain text of the passage's lines, unmarked
	Partial bool    `json:"partial,omitempty"`
	Score   float64 `json:"score"`
	Date    string  `json:"date,omitempty"`
	Who     string  `json:"who,omitempty"`
	Trust   string  `json:"trust,omitempty"`
}

// SearchResult is the ranked hits; Indexing is true while the index is still catching up.
type SearchResult struct {
	Hits     []Hit `json:"hits"`
	Indexing bool  `json:"indexing,omitempty"`
}

// Note is one note, map or the router, read by name.
type Note struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Title   string `json:"title,omitempty"`
	Text    string `json:"text"`
	Outside bool   `json:"outside,omitempty"` // written mostly by others: reading it is reading outside content
}

// NoteHook is one line of the note index.
type NoteHook struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Hook    string `json:"hook"`
	Outside bool   `json:"outside,omitempty"` // the note is written mostly by others: its hook is outside content
}

// Overview is the router plus the note index, bounded in size whatever the memory holds.
type Overview struct {
	Router    string     `json:"router"`
	Notes     []NoteHook `json:"notes"`
	MoreNotes int        `json:"moreNotes,omitempty"` // notes left out to keep the overview bounded
	Inbox     int        `json:"inbox"`
	Indexing  bool       `json:"indexing,omitempty"`
}

// RecentItem is one line of the memory log.
type RecentItem struct {
	Time    time.Time `json:"time"`
	Who     string    `json:"who"`
	Via     string    `json:"via"`
	Op      string    `json:"op"`
	Summary string    `json:"summary"`
	Entry   string    `json:"entry"`
	// Outside is true for a line not in the owner's own words (its entry's trust is outside), which an
	// adapter fences before a model reads it. The box's own changes (the job runner's tidy, an import
	// the owner ran) are trust own, whatever way they came in.
	Outside bool `json:"-"`
}

// TidyResult counts what one tidy did; one tidy is one commit.
type TidyResult struct {
	Filed    int      `json:"filed"`
	Into     []string `json:"into,omitempty"` // the notes lines were filed into, each once
	Created  []string `json:"created"`
	Replaced int      `json:"replaced"`
	Dropped  int      `json:"dropped"`
	Merged   []string `json:"merged,omitempty"`
	Skipped  []string `json:"skipped,omitempty"` // notes left alone, with why
	Entry    string   `json:"entry,omitempty"`
	Text     string   `json:"text"`
	// With a brain (planner.go): the lines filed as the brain planned them, the lines whose proposal
	// the checks refused (the rules filed them), and the model that planned or why none did.
	Planned []string      `json:"planned,omitempty"`
	Refused []PlanRefusal `json:"refused,omitempty"`
	Brain   string        `json:"brain,omitempty"`
}

// UndoResult says what was undone.
type UndoResult struct {
	Entry   string `json:"entry"`
	UndoOf  string `json:"undoOf"`
	Commit  string `json:"commit"`
	Summary string `json:"summary"`
}

package card

import (
	"path"
	"strings"

	"github.com/boxmem/box/internal/errs"
	"github.com/boxmem/box/internal/lazyregexp"
)

var (
	typeRE  = lazyregexp.New(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	inboxRE = lazyregexp.New(`^/_content/inbox/\d{4}-\d{2}-\d{2}(-([2-9]|[1-9]\d+))?\.md$`) // a day, or a later part of it
)

// IsCard reports whether a box path names a card or Markdown document the box checks (.card or .md).
func IsCard(boxPath string) bool {
	return isCardFile(boxPath) || strings.HasSuffix(boxPath, ".md")
}

func isCardFile(boxPath string) bool { return strings.HasSuffix(boxPath, ".card") }

// ValidType reports whether s can name a card type: lowercase words joined by "-" ("note", "kind-job").
func ValidType(s string) bool { return typeRE.MatchString(s) }

// TypeOf returns the type of the card at boxPath given its frontmatter type: value ("" if none).
// A .card takes its type from the name (Name.type.card → type; type.card → type; Foo.kind.job.card →
// kind-job) and a type: key must agree. A .md takes the type: key, else its name (MEMORY.md → router,
// moc-*.md or anything under /_content/memory/maps/ → map, entity-*/topic-*.md → note,
// /_content/inbox/YYYY-MM-DD.md → inbox-day), else "" (untyped). Other files are "".
func TypeOf(boxPath, frontType string) (string, error) {
	const op = "card.type"
	if !strings.HasPrefix(boxPath, "/") {
		boxPath = "/" + boxPath
	}
	base := path.Base(boxPath)
	switch {
	case isCardFile(boxPath):
		parts := strings.Split(strings.TrimSuffix(base, ".card"), ".")
		typ := parts[0]
		if len(parts) > 1 {
			typ = strings.Join(parts[1:], "-")
		}
		if !ValidType(typ) {
			return "", errs.E(op, errs.Invalid, "cannot tell the type of %s from its name: name a card Name.type.card, like Leo.note.card", base)
		}
		if frontType != "" && frontType != typ {
			return "", errs.E(op, errs.Invalid, "type: %s does not match the file name, which makes it a %s card: fix the key or rename the file", frontType, typ)
		}
		return typ, nil
	case strings.HasSuffix(base, ".md"):
		if frontType != "" {
			if !ValidType(frontType) {
				return "", errs.E(op, errs.Invalid, "type: %q is not a type name: use lowercase words joined by -, like note", frontType)
			}
			return frontType, nil
		}
		return typeByName(boxPath, base), nil
	}
	return "", nil
}

func typeByName(boxPath, base string) string {
	switch {
	case base == "MEMORY.md":
		return "router"
	case strings.HasPrefix(base, "moc-") || strings.HasPrefix(boxPath, "/_content/memory/maps/"):
		return "map"
	case strings.HasPrefix(base, "entity-") || strings.HasPrefix(base, "topic-"):
		return "note"
	case inboxRE.MatchString(boxPath):
		return "inbox-day"
	}
	return ""
}

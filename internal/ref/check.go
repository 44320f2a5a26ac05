package ref

import (
	"os"
	"path"
	"sort"
	"strings"

	"github.com/boxmem/box/internal/finding"
	"github.com/boxmem/box/internal/layout"
)

// Finding codes this package reports.
const (
	CodeBroken    = "broken-ref"     // warning: the target does not exist
	CodeClosed    = "bad-ref"        // warning: the ref fails closed and resolves to nothing
	CodeCollision = "case-collision" // error: two names in one folder differ only by case
)

// Check reports the refs of one file that fail closed or whose target is missing, all as warnings.
// Malformed frontmatter is the card parser's finding, not repeated here; the body is still checked.
func (rv *Resolver) Check(boxPath string, data []byte) []finding.Finding {
	refs, _ := Extract(boxPath, data)
	var out []finding.Finding
	for _, r := range refs {
		res, err := rv.ResolveRef(boxPath, r)
		switch {
		case err != nil:
			out = append(out, finding.Warnf(boxPath, r.Line, CodeClosed, "Reference %s could not be checked: %v", show(r), err))
		case res.Closed():
			out = append(out, finding.Warnf(boxPath, r.Line, CodeClosed,
				"Reference %s resolves to nothing: %s; write it from the box root, like /_content/…", show(r), res.Reason))
		case r.Kind == Wikilink && !res.Exists:
			out = append(out, finding.Warnf(boxPath, r.Line, CodeBroken,
				"Broken reference: %s matches no file under /_content/", show(r)))
		case !res.Exists:
			out = append(out, finding.Warnf(boxPath, r.Line, CodeBroken,
				"Broken reference: %s → %s does not exist", show(r), res.Target))
		}
	}
	return out
}

// show renders a ref as the author wrote it.
func show(r Ref) string {
	if r.Kind == Wikilink {
		return "[[" + r.Raw + "]]"
	}
	return `"` + r.Raw + `"`
}

// Collisions reports, as errors, names in the folder dir (a box path) that differ only by case
// ("Plan.md" and "plan.md"): they collide on case-insensitive file systems and clones. One finding per
// colliding name; a missing or unreadable folder has none.
func Collisions(root, dir string) []finding.Finding {
	clean, err := layout.Clean(dir)
	if err != nil {
		return nil
	}
	host, err := layout.Host(root, clean)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir(host)
	if err != nil {
		return nil
	}
	groups := map[string][]string{}
	for _, e := range entries {
		k := strings.ToLower(e.Name())
		groups[k] = append(groups[k], e.Name())
	}
	var out []finding.Finding
	for _, names := range groups {
		if len(names) < 2 {
			continue
		}
		sort.Strings(names)
		for _, n := range names {
			var others []string
			for _, o := range names {
				if o != n {
					others = append(others, `"`+o+`"`)
				}
			}
			out = append(out, finding.Errorf(path.Join(clean, n), 0, CodeCollision,
				"%q differs only by case from %s in the same folder: rename one (they collide on macOS and Windows)",
				n, strings.Join(others, ", ")))
		}
	}
	finding.Sort(out)
	return out
}

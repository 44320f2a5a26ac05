package inbox

import (
	"path"
	"strings"

	"github.com/boxmem/box/internal/finding"
)

// Check reports what is wrong with the day file at box path p: broken frontmatter, a date that is not
// the file's, repeated ids, and lines that look like inbox lines but are not in the format.
func Check(p string, data []byte) []finding.Finding {
	d, err := ParseDay(data)
	if err != nil {
		return []finding.Finding{finding.Errorf(p, 1, "inbox-frontmatter", "%v", err)}
	}
	var fs []finding.Finding
	if day, _, ok := ParseFileName(path.Base(p)); ok && d.Date != "" && d.Date != day {
		fs = append(fs, finding.Warnf(p, 0, "inbox-date", "The file says its date is %s but is named for %s.", d.Date, day))
	}
	seen := map[string]int{}
	for i, e := range d.Entries {
		switch {
		case e.Line != nil:
			if first, ok := seen[e.Line.ID]; ok {
				fs = append(fs, finding.Errorf(p, i+1, "inbox-duplicate-id", "The id ^%s is also on line %d; each line needs its own.", e.Line.ID, first))
			} else {
				seen[e.Line.ID] = i + 1
			}
		case strings.HasPrefix(e.Raw, "- ") && strings.Contains(e.Raw, Sep):
			fs = append(fs, finding.Warnf(p, i+1, "inbox-line", "This line is not in the inbox format (- HH:MM:SS · who · via · trust · text ^id); it is kept as written but not treated as an inbox line."))
		}
	}
	return fs
}

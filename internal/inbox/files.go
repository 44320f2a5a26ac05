package inbox

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxFileBytes bounds one inbox file. Past it a day goes on in its next file (YYYY-MM-DD-2.md, -3.md …):
// every write rewrites its file and keeps an undo copy of it, so a small file keeps a write's cost the
// same however much a day holds.
const MaxFileBytes = 64 << 10

// FileName is the file of a day's n-th part: YYYY-MM-DD.md for the first, YYYY-MM-DD-n.md after.
func FileName(date string, n int) string {
	if n <= 1 {
		return date + ".md"
	}
	return fmt.Sprintf("%s-%d.md", date, n)
}

// ParseFileName reads a day file's name back into its date and part number.
func ParseFileName(name string) (date string, n int, ok bool) {
	base, found := strings.CutSuffix(name, ".md")
	if !found || len(base) < 10 || !validDate(base[:10]) {
		return "", 0, false
	}
	date, rest := base[:10], base[10:]
	if rest == "" {
		return date, 1, true
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "-"))
	if !strings.HasPrefix(rest, "-") || err != nil || n < 2 || strconv.Itoa(n) != rest[1:] {
		return "", 0, false
	}
	return date, n, true
}

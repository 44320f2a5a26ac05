package say

import "testing"

func TestWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Plural(0, "line", "lines"), "lines"},
		{Plural(1, "line", "lines"), "line"},
		{Plural(2, "entry", "entries"), "entries"},
		{Count(1, "commit"), "1 commit"},
		{Count(0, "commit"), "0 commits"},
		{Count(12, "file"), "12 files"},
		{Hash("0123456789abcdef0123"), "0123456789ab"},
		{Hash("abc"), "abc"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

package schema

import (
	"testing"

	"github.com/boxmem/box/internal/card"
)

// FuzzSchemaParse: a box-local schema file never panics the parser, and a schema it accepts can check a
// card of its type without panicking.
func FuzzSchemaParse(f *testing.F) {
	f.Add([]byte("fields:\n  title: {type: string, required: true}\nbody: true\n"))
	f.Add([]byte("fields:\n  n: {type: int}\n  when: {type: date}\n  tags: {type: list}\nmarkdocTags: [x]\n"))
	f.Add([]byte("not: [valid"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parse("thing", data)
		if err != nil || s == nil {
			return
		}
		r := &Registry{schemas: map[string]*Schema{"thing": s}, broken: map[string]string{}}
		c, err := card.Parse("/_content/x.thing.card", []byte("---\ntitle: x\nn: 3\n---\nbody {% x /%}\n"))
		if err != nil {
			t.Fatal(err)
		}
		r.Check(c)
	})
}

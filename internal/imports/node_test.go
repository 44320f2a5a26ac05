package imports

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/boxmem/box/internal/goldenfile"
	"github.com/boxmem/box/internal/mcptest"
)

// TestServerMemoryFromTheRealServer makes the server-memory sample with the real reference server
// (over stdio, through its create_entities, create_relations and add_observations tools), checks it is
// the committed sample byte for byte (so TestServerMemorySample and the fuzz seeds read what the server
// writes), and reads it.
func TestServerMemoryFromTheRealServer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	cs := mcptest.ServerMemory(t, file)
	mcptest.CallOK(t, cs, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Leo", "entityType": "person", "observations": []any{"Swims on Thursdays at 5:30", "Leo likes tram 28 in Lisbon"}},
		map[string]any{"name": "Mira", "entityType": "person", "observations": []any{"Is a nurse"}},
		map[string]any{"name": "St Mary's Hospital", "entityType": "organization", "observations": []any{}},
		map[string]any{"name": "John_Smith", "entityType": "person", "observations": []any{"Speaks fluent Portuguese"}},
		map[string]any{"name": "Zoë", "entityType": "person", "observations": []any{"Vit à Lisbonne 🇵🇹 depuis 2019"}},
	}})
	mcptest.CallOK(t, cs, "create_relations", map[string]any{"relations": []any{
		map[string]any{"from": "Leo", "to": "Mira", "relationType": "son_of"},
		map[string]any{"from": "Mira", "to": "St Mary's Hospital", "relationType": "works_at"},
	}})
	mcptest.CallOK(t, cs, "add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "Mira", "contents": []any{"Works night shifts on weekends", "My PIN is 4821"}},
	}})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, "testdata/server-memory/memory.jsonl", data)
	c := mustRead(t, ServerMemory, file)
	if len(c.lines) != 10 {
		t.Errorf("%d lines from the server's graph, want 7 observations, 1 entity without any and 2 relations: %q", len(c.lines), texts(c.lines))
	}
}

package duplicate_test

import (
	"testing"

	"github.com/boxmem/box/internal/duplicatetest"
)

// The labelled set (testdata/pairs.json, docs/MERGE.md "Measured"): at least 150 pairs; the rules never
// merge a pair labelled keep-apart (precision 1.0), and they find at least minRecall of the pairs labelled
// merge. bench/merge prints the same numbers.
const minRecall = 0.75

func TestLabelledPairs(t *testing.T) {
	cases, err := duplicatetest.Load("testdata/pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 150 {
		t.Fatalf("the labelled set has %d pairs; it needs at least 150", len(cases))
	}
	q, _, outcomes, err := duplicatetest.Evaluate(cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outcomes {
		if !o.Right() || testing.Verbose() {
			t.Logf("%v %s", o.Merged, o.Describe())
		}
	}
	t.Logf("precision %.3f recall %.3f %+v", q.Precision(), q.Recall(), q)
	if q.Precision() != 1 {
		t.Errorf("precision %.3f: a pair labelled keep-apart was merged", q.Precision())
	}
	if q.Recall() < minRecall {
		t.Errorf("recall %.3f, below the floor %.2f", q.Recall(), minRecall)
	}
}

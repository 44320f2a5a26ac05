package note

import (
	"maps"
	"slices"
	"sort"

	"github.com/boxmem/box/internal/errs"
)

// JoinMap turns a letter index and its letter maps back into one map. Letter maps the index does
// not list are joined too, so no entry is lost.
func JoinMap(index []byte, letters map[string][]byte) ([]byte, error) {
	m, err := ParseMap(index)
	if err != nil {
		return nil, err
	}
	var all []MapEntry
	for _, l := range slices.Sorted(maps.Keys(letters)) {
		lm, err := ParseMap(letters[l])
		if err != nil {
			return nil, errs.E("note.joinMap", errs.Invalid, "The letter map %s cannot be read: %v", l, err)
		}
		all = append(all, lm.Entries...)
	}
	sort.SliceStable(all, func(i, j int) bool { return sortKey(all[i].Target) < sortKey(all[j].Target) })
	return replaceEntries(m.doc, all), nil
}

package inbox

import "bytes"

// Render returns the file's bytes; for a parsed, unchanged Day they are the bytes it was parsed from.
func (d *Day) Render() []byte {
	var b bytes.Buffer
	for i, e := range d.Entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Raw)
	}
	if len(d.Entries) > 0 && !d.noEOL {
		b.WriteByte('\n')
	}
	return b.Bytes()
}

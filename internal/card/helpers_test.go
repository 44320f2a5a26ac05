package card

// Bytes reassembles the file from its parts; for a parsed card it is exactly Raw.
func (c *Card) Bytes() []byte {
	out := make([]byte, 0, len(c.open)+len(c.Front)+len(c.close)+len(c.Body))
	out = append(out, c.open...)
	out = append(out, c.Front...)
	out = append(out, c.close...)
	return append(out, c.Body...)
}

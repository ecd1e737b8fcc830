package scenario

import "strings"

// AppendText appends c as one line of scenario text (no newline), in the
// canonical form: command, positional words with their keywords, flags, then
// key=value arguments in the order given. Parse(Format) yields c again.
func (c *Command) AppendText(dst []byte) []byte {
	dst = append(dst, c.Op.String()...)
	i := 0
	for _, w := range grammar[c.Op].words {
		w = strings.TrimPrefix(w, "?")
		if w == strings.ToLower(w) {
			dst = append(dst, ' ')
			dst = append(dst, w...)
			continue
		}
		if i < len(c.Args) {
			dst = append(dst, ' ')
			dst = append(dst, c.Args[i]...)
			i++
		}
	}
	for _, f := range c.Flags {
		dst = append(dst, ' ')
		dst = append(dst, f...)
	}
	for _, kv := range c.KV {
		dst = append(dst, ' ')
		dst = append(dst, kv.Key...)
		dst = append(dst, '=')
		dst = append(dst, kv.Value...)
	}
	return dst
}

// Format returns the script as text, one command per line, comments dropped.
func (s *Script) Format() []byte {
	var b []byte
	for i := range s.Commands {
		b = s.Commands[i].AppendText(b)
		b = append(b, '\n')
	}
	return b
}

package scenario

import "strings"

// AppendText appends c as one line of scenario text (no newline), in the
// canonical form: command, positional words with their keywords, flags, then
// key=value arguments in the order given. Parse(Format) yields c again.
func (c *command) AppendText(dst []byte) []byte {
	dst = append(dst, c.opcode.String()...)
	i := 0
	for _, w := range grammar[c.opcode].words {
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
	for _, kv := range c.keyValue {
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
	for i := range s.commands {
		b = s.commands[i].AppendText(b)
		b = append(b, '\n')
	}
	return b
}

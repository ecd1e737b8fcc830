package codec

func compress(dst, raw []byte, c Compression) ([]byte, error) { return dst, ErrUnsupportedCodec }

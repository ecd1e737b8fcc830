package codec

// Design note: varints.
//
// Records (DefaultRecord) use protobuf-style zig-zag varints: the
// signed value n is mapped to (n<<1) ^ (n>>31) and written as unsigned LEB128,
// seven bits a byte, low group first, high bit set on every byte but the last.
// Kafka (ByteUtils.readVarint) reads at most 5 bytes for an int32 and 10 for an
// int64; a 5th (10th) byte that still has its continuation bit set is an
// error, and the spare high bits of that last byte are dropped, not checked.
// These decoders follow Kafka exactly, so they accept 5-byte encodings whose
// last byte is in 0x10..0x7f; franz-go's kbin rejects those.
//
// Decoders return the value and the number of bytes read; n == 0 means the
// input ended inside the varint, n < 0 that the varint is too long. The
// one-byte case is split off so that the common path inlines.

// readUvarint32 decodes an unsigned varint of at most 5 bytes.
func readUvarint32(b []byte) (uint32, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint32(b[0]), 1
	}
	return readUvarint32Slow(b)
}

//go:noinline
func readUvarint32Slow(b []byte) (uint32, int) {
	var x uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if c < 0x80 {
			return x | uint32(c)<<(7*i), i + 1
		}
		if i == 4 {
			return 0, -1
		}
		x |= uint32(c&0x7f) << (7 * i)
	}
	return 0, -1 // unreachable
}

// readVarint32 decodes a zig-zag varint of at most 5 bytes. One- and
// two-byte encodings (values in [-8192, 8191]: record lengths, deltas and
// key/value lengths of typical records) take the inlined path.
func readVarint32(b []byte) (int32, int) {
	if len(b) >= 2 {
		u := uint32(b[0])
		if u < 0x80 {
			return int32(u>>1) ^ -int32(u&1), 1
		}
		if c := uint32(b[1]); c < 0x80 {
			u = u&0x7f | c<<7
			return int32(u>>1) ^ -int32(u&1), 2
		}
	}
	return readVarint32Slow(b)
}

//go:noinline
func readVarint32Slow(b []byte) (int32, int) {
	u, n := readUvarint32Slow(b)
	return int32(u>>1) ^ -int32(u&1), n
}

// readVarint64 decodes a zig-zag varlong of at most 10 bytes.
func readVarint64(b []byte) (int64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		u := uint64(b[0])
		return int64(u>>1) ^ -int64(u&1), 1
	}
	return readVarint64Slow(b)
}

//go:noinline
func readVarint64Slow(b []byte) (int64, int) {
	var x uint64
	for i := 0; i < 10; i++ {
		if i >= len(b) {
			return 0, 0
		}
		c := b[i]
		if c < 0x80 {
			x |= uint64(c) << (7 * i)
			return int64(x>>1) ^ -int64(x&1), i + 1
		}
		if i == 9 {
			return 0, -1
		}
		x |= uint64(c&0x7f) << (7 * i)
	}
	return 0, -1 // unreachable
}

// appendUvarint32 appends u as an unsigned varint.
func appendUvarint32(dst []byte, u uint32) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// appendVarint32 appends n as a zig-zag varint (at most 5 bytes).
func appendVarint32(dst []byte, n int32) []byte {
	return appendUvarint32(dst, uint32(n)<<1^uint32(n>>31))
}

// appendVarint64 appends n as a zig-zag varlong (at most 10 bytes).
func appendVarint64(dst []byte, n int64) []byte {
	u := uint64(n)<<1 ^ uint64(n>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// sizeUvarint32 is the encoded length of u.
func sizeUvarint32(u uint32) int {
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// sizeVarint32 is the encoded length of n as a zig-zag varint.
func sizeVarint32(n int32) int { return sizeUvarint32(uint32(n)<<1 ^ uint32(n>>31)) }

// sizeVarint64 is the encoded length of n as a zig-zag varlong.
func sizeVarint64(n int64) int {
	u := uint64(n)<<1 ^ uint64(n>>63)
	s := 1
	for u >= 0x80 {
		u >>= 7
		s++
	}
	return s
}

// next32 reads the zig-zag varint at b[p:] and returns it with the position
// after it; the position is 0 when b ends inside the varint and -1 when the
// varint is too long. The one-byte case inlines at the call site.
func next32(b []byte, p int) (int32, int) {
	if p < len(b) && b[p] < 0x80 {
		c := int32(b[p])
		return c>>1 ^ -(c & 1), p + 1
	}
	return next32Slow(b, p)
}

//go:noinline
func next32Slow(b []byte, p int) (int32, int) {
	if p+1 < len(b) && b[p+1] < 0x80 && p >= 0 {
		u := uint32(b[p]&0x7f) | uint32(b[p+1])<<7
		if b[p] >= 0x80 {
			return int32(u>>1) ^ -int32(u&1), p + 2
		}
	}
	if p > len(b) {
		return 0, 0
	}
	v, n := readVarint32(b[p:])
	if n <= 0 {
		return 0, n
	}
	return v, p + n
}

// next64 is next32 for a varlong.
func next64(b []byte, p int) (int64, int) {
	if p < len(b) && b[p] < 0x80 {
		c := int64(b[p])
		return c>>1 ^ -(c & 1), p + 1
	}
	return next64Slow(b, p)
}

//go:noinline
func next64Slow(b []byte, p int) (int64, int) {
	if p > len(b) {
		return 0, 0
	}
	v, n := readVarint64(b[p:])
	if n <= 0 {
		return 0, n
	}
	return v, p + n
}
